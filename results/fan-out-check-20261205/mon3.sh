#!/bin/bash
# every 2 s: each child of pkbench ($1): pid state wchan fds cpu-ticks kids
parent=$1; out=$2
while [ -d /proc/$parent ]; do
  ts=$(date +%T)
  for p in $(cat /proc/$parent/task/*/children 2>/dev/null); do
    read -r st ut stt < <(awk '{print $3, $14, $15}' /proc/$p/stat 2>/dev/null)
    echo "$ts $p st=$st cpu=$((ut+stt)) fds=$(ls /proc/$p/fd 2>/dev/null | wc -l) wchan=$(cat /proc/$p/wchan 2>/dev/null) kids=$(wc -w < /proc/$p/task/$p/children 2>/dev/null)"
  done
  sleep 2
done > $out
