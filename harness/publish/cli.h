/*
 * cli — `pkbench publish DIR --out SITE [--no-plots] [--title T] [--repo DIR] [--ratio]`, the
 * command (cli.c) around publish.h's pkb_publish.
 */
#ifndef PKB_PUBLISH_CLI_H
#define PKB_PUBLISH_CLI_H

/* `pkbench publish ...` (argv[0] is "publish"). `usage_text`: pkbench's usage lines, printed
 * after a usage error; `help`: pkbench's --help, for publish --help (which then exits 0). Returns
 * the exit status: 0, or 1 after a message on stderr. */
int pkb_cmd_publish(int argc, char **argv, const char *usage_text, void (*help)(void));

#endif /* PKB_PUBLISH_CLI_H */
