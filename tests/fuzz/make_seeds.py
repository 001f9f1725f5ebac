#!/usr/bin/env python3
"""Writes the generated seeds of tests/fuzz/corpus/ (run from the repository root).

Every lines, capture and parse seed, and the hand-made results files: a minimal valid file cut
from tests/data/compare-fixture.json, and variants of it with one fault each. The results files
from real pkbench runs (scenarios-quick*.json, forkathon-quick.json, phases-quick.json) are data,
not written here. Seeds stay small: the largest one sets libFuzzer's default -max_len.
"""
import copy
import json
import os

ROOT = 'tests/fuzz/corpus'
KEEP = {'all': 0, 'none': 1, 'tail': 2, 'head': 3, 'fail': 4}


def size_sel(n):
    """feed.h's size byte: 0 unset, 1..191 bytes, 192..255 1..64 KiB."""
    if n < 192:
        return n
    assert n % 1024 == 0 and 1 <= n // 1024 <= 64
    return 191 + n // 1024


def hdr(raw=0, lines=1, eof=1, chunk=2, keep='all', max_line=0, max_bytes=0, max_lines=0,
        run_kib=0, seed=0x123456):
    """feed.h's 8 header bytes. run_kib (a multiple of 9, up to 72) inserts that much 'x' at
    offset seed % (len(payload) + 1)."""
    b0 = raw | lines << 1 | eof << 2 | chunk << 3 | KEEP[keep] << 5
    assert run_kib % 9 == 0 and run_kib <= 72
    run = 0 if run_kib == 0 else 247 + run_kib // 9
    return bytes([b0, size_sel(max_line), size_sel(max_bytes), max_lines, run,
                  seed & 255, seed >> 8 & 255, seed >> 16 & 255])


def put(target, name, data):
    folder = os.path.join(ROOT, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), 'wb') as f:
        f.write(data)


# ---- fuzz_lines ---------------------------------------------------------------------------------
BAD_UTF8 = (b"\xff\xfe\n\xc3\xa9t\xc3\xa9\n\xe2\x82\n\xed\xa0\x80\n\xf4\x90\x80\x80\n"
            b"\xf0\x9f\x98\x80\n\xc0\xaf\n\xe0\x80\xaf\n\xf8\x88\x80\x80\x80\nend\xe2\x82")
put('lines', 'plain', hdr() + b"hello\nworld\n")
put('lines', 'crlf', hdr() + b"a\r\nb\r\n\r\nc\r\rd\r")
put('lines', 'crlf-raw', hdr(raw=1) + b"a\r\nb\r\n\r\nc\r\rd\r")
put('lines', 'invalid-utf8', hdr(chunk=2) + BAD_UTF8)
put('lines', 'invalid-utf8-raw', hdr(raw=1, chunk=3) + BAD_UTF8)
put('lines', 'ascii-then-high',
    hdr(chunk=2) + b"a" * 40 + b"\xc3\xa9" + b"b" * 40 + b"\n" + b"c" * 33 + b"\xe2\n")
put('lines', 'no-final-newline', hdr(eof=0) + b"one\ntwo\nthree")
put('lines', 'empty-lines', hdr(chunk=1) + b"\n\n\n\n")
put('lines', 'max-line-16',
    hdr(max_line=16) + b"short\n" + b"x" * 40 + b"\n" + b"y" * 16 + b"\n" + b"z" * 17 + b"\nend")
put('lines', 'max-line-final', hdr(max_line=8, eof=0) + b"ok\n" + b"w" * 30)
put('lines', 'long-line-72k', hdr(raw=1, chunk=0, run_kib=72, seed=6) + b"short\nend\r\n")
put('lines', 'flood-72k', hdr(chunk=3, run_kib=72, seed=0))
put('lines', 'long-line-over-max',
    hdr(chunk=1, run_kib=72, max_line=64 * 1024, seed=3) + "é€😀\nok\n".encode())
put('lines', 'long-line-in-utf8', hdr(chunk=0, run_kib=9, seed=1) + "é\n".encode())
put('lines', 'bulk', hdr(lines=0) + b"a\nb\nc")
put('lines', 'bulk-forced-end', hdr(lines=0, eof=0) + b"a\nb\nc")  # pump fix 1

# ---- fuzz_capture -------------------------------------------------------------------------------
put('capture', 'head-bytes', hdr(keep='head', max_bytes=10) + b"aaaa\nbbbbbbbbbbbb\nc\n")
put('capture', 'head-lines', hdr(keep='head', max_lines=3) + b"1\n2\n3\n4\n5\n")
put('capture', 'head-dropped-middle',
    hdr(keep='head', max_bytes=64, max_line=8) + b"A\n" + b"L" * 30 + b"\nB\n")
put('capture', 'head-64k-of-long',
    hdr(keep='head', max_bytes=64 * 1024, chunk=3, run_kib=72, seed=4) + b"h\n" * 40)
put('capture', 'fail-bytes', hdr(keep='fail', max_bytes=12) + b"abc\ndef\nghi\njkl\n")
put('capture', 'tail-lines', hdr(keep='tail', max_lines=2) + b"1\n2\n3\n4\n5")
put('capture', 'tail-bytes',
    hdr(keep='tail', max_bytes=16, chunk=1) + b"one\ntwo\nthree\nfour\nfive\nsix\n")
put('capture', 'tail-exact-cap', hdr(keep='tail', max_bytes=8) + b"1234567\n12345678\nab\n")
put('capture', 'tail-dropped-middle',  # pump fix 2
    hdr(keep='tail', max_bytes=16) + b"A\n" + b"L" * 30 + b"\nB\n")
put('capture', 'tail-uncapped-bulk', hdr(keep='tail', lines=0) + b"a\nb\n")  # pump fix 3
put('capture', 'tail-4k-after-long',
    hdr(keep='tail', max_bytes=4096, chunk=0, run_kib=18, seed=2) + b"t\n" + b"u\n" * 100)
put('capture', 'none', hdr(keep='none') + b"x\ny\n")

# ---- fuzz_parse: a flags byte (bit 0 percent, bits 1-3 the count range), then the value --------
for name, value, flags in [
        ('percent', '5%', 1), ('percent-off', '5%', 0), ('double-percent', '5%%', 1),
        ('exp', '1e3', 0), ('exp-open', '1e', 0), ('exp-sign', '1e+', 0),
        ('blank', ' 1', 0), ('trailing', '0.05x', 0), ('underscore', '1_000', 0),
        ('nan', 'nan', 0), ('inf', '-inf', 0), ('hex-float', '0x1p3', 0),
        ('neg-zero', '-0', 0), ('point-first', '.5', 0), ('point-last', '5.', 0),
        ('minus', '-', 0), ('empty', '', 0), ('alpha', '0.05', 0),
        ('max', '1.7976931348623157e308', 0), ('over', '1e309', 0),
        ('denormal', '4.9e-324', 0), ('under', '1e-400', 0), ('zero-huge-exp', '0e99999', 0),
        ('many-digits', '0.' + '0' * 30 + '123456789012345678901234567890e40', 0),
        ('long-max', '9223372036854775807', 2), ('long-over', '9223372036854775808', 4),
        ('long-min', '-9223372036854775808', 4), ('leading-zeros', '007', 8),
        ('iterations', '20000', 8), ('negative-range', '-3', 6), ('plus-count', '+5', 2)]:
    put('parse', name, bytes([flags]) + value.encode())

# ---- fuzz_results -------------------------------------------------------------------------------
RESULTS = os.path.join(ROOT, 'results')
os.makedirs(RESULTS, exist_ok=True)


def dump(name, doc):
    with open(os.path.join(RESULTS, name), 'w') as f:
        f.write(json.dumps(doc, separators=(',', ':')))


with open('tests/data/compare-fixture.json') as f:
    fixture = json.load(f)
dump('compare-fixture.json', fixture)  # compacted

minimal = copy.deepcopy(fixture)
minimal.pop('_comment', None)
minimal['series'] = minimal['series'][:2]
minimal['benchmarks'] = []
for series in minimal['series']:
    for key in ('samples_ns', 'child_cpu_ns', 'parent_cpu_ns', 'iterations', 'procs_running',
                'noisy'):
        if key in series:
            series[key] = series[key][:3]
dump('minimal.json', minimal)


def variant(name, change):
    doc = copy.deepcopy(minimal)
    change(doc)
    dump(name, doc)


def first(doc):
    return doc['series'][0]


def procs_running(doc):
    for series in doc['series']:
        series.pop('noisy', None)
        series['procs_running'] = [1, 5, 9]


variant('version-2.json', lambda d: d.update(schema_version=2))
variant('wrong-schema.json', lambda d: d.update(schema='pkbench-compare'))
variant('missing-env.json', lambda d: d['environment'].pop('kernel'))
variant('two-baselines.json', lambda d: [s.update(baseline=True) for s in d['series']])
variant('negative-sample.json', lambda d: first(d)['samples_ns'].__setitem__(1, -5))
variant('huge-samples.json',  # results fix
        lambda d: first(d).update(samples_ns=[1.5e308, 1.7e308, 1e308]))
variant('one-sample.json', lambda d: first(d).update(samples_ns=[1234.5]))
variant('no-samples-measured.json', lambda d: first(d).update(samples_ns=[]))
variant('bad-status.json', lambda d: first(d).update(status='pending\nx'))
variant('procs-running.json', procs_running)
variant('noise-floor-ok.json', lambda d: d.update(noise_floor={
    'alpha': 0.05,
    'series': {first(d)['name']: {'mde': 0.03, 'samples_b_ns': [1000, 1100]}}}))
variant('noise-floor-bad.json', lambda d: d.update(noise_floor={
    'alpha': 0.05, 'series': {first(d)['name']: {'mde': -1}}}))
text = json.dumps(minimal, separators=(',', ':'))
for name, data in [('duplicate-key.json', text[:-1] + ',"suite":"again"}'),
                   ('truncated.json', text[:len(text) // 2]),
                   ('not-an-object.json', '[1, 2, 3]'),
                   ('empty', '')]:
    with open(os.path.join(RESULTS, name), 'w') as f:
        f.write(data)
