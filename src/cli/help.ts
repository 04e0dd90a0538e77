/** What `cellflow --help` and `cellflow <command> --help` print. */

export const GENERAL = `cellflow: drive a Cellflow server from the command line

usage: cellflow <command> [arguments] [flags]

commands:
  tables                        list the tables (id, name, rows)
  import <table> <file.csv>     add the rows of a CSV file (header row = column names)
  export <table>                write the table as CSV to stdout
  run <table> [flags]           start a run of the table's groups (--follow to watch it)
  stop <table> [flags]          stop what is in flight (all of it, a run, groups, rows)
  rows delete <table> [flags]   delete the rows matching --where (their running cells stop)
  events <table> [--after n]    print the table's events as they come, one JSON line each

A <table>, column or group may be named by id or by name.
Every command takes --help.

environment:
  CELLFLOW_URL       the server (default http://127.0.0.1:3000)
  CELLFLOW_API_KEY   the workspace's API key: npm start prints it when it starts and
                     keeps it in its data folder (.data/api-key)

exit codes: 0 success, 1 the API refused (its message is printed) or a followed run
halted or was stopped, 2 bad usage, 130 a follow detached with Ctrl-C`;

export const TABLES = `usage: cellflow tables

Lists the key's tables: id, row count, the auto-run switch (on/off) and name.`;

export const IMPORT = `usage: cellflow import <table> <file.csv>

Adds the rows of a CSV file to the table. The header row names columns (by name or id);
every value is checked against its column's type, and one bad value refuses the whole
file: nothing of it is kept (the API's issues say where). At most 500 MiB and
1,000,000 rows. The file is streamed, and the server inserts its rows as they arrive:
on a terminal, stderr shows the bytes sent.
Prints the number of rows inserted.`;

export const EXPORT = `usage: cellflow export <table> > file.csv

Writes the whole table as CSV to stdout (header = column names), streamed.`;

export const RUN = `usage: cellflow run <table> [flags]

Starts a run of the table's groups and prints its id, or with --follow shows its progress
until it ends.

flags:
  --group <g>          run this group (repeat for several; default: every group)
  --mode <m>           all | incomplete | new | failed | stale (default incomplete: cells
                       never run, failed or stopped; all re-runs everything; stale: cells
                       never run and those completed longer ago than --stale-after-hours)
  --stale-after-hours <h>
                       with --mode stale: a completed cell older than h hours is re-run
  --where <col=value>  only rows whose column equals the value, read as the column's
                       type (number, boolean yes/no, date, text); repeat to AND them
  --where-json <list>  conditions as the API takes them, e.g.
                       '[{"column":"n","op":"gt","value":5},{"group":"enrich","status":"error"}]'
                       or a group's outcome: '[{"group":"enrich","outcome":"condition_not_met"}]'
  --limit <n>          at most n rows
  --resume             restart failed or stopped cells from where they stopped
                       (with --mode incomplete or failed)
  --max-credits <n>    halt the run once its paid calls reach n credits (up to 3 decimals)
  --max-credits-per-row <n>
                       a paid call that would take its row past n credits in this
                       run is not made; that cell ends over_budget (default: the
                       table's maxCreditsPerRow)
  --dry-run            print what the run would do (rows, cells, credits); start nothing
  --follow             show progress until the run ends: done/total, cells/s, errors,
                       ETA (a bar on a terminal, else a line every 3 s)

With --follow the exit code is 0 when the run completed, also when some cells ended in
error (the summary counts them and says how to re-run them: --mode failed); 1 when it
halted (credit cap or the month's credits: the reason is printed) or was stopped.
Ctrl-C stops following and leaves the run going (exit 130); cellflow stop stops it.`;

export const STOP = `usage: cellflow stop <table> [flags]

Stops every queued, running or paused cell in scope (default: the whole table) and
prints how many were stopped.

flags:
  --run <id>           only this run's cells
  --group <g>          only this group's cells (repeat for several)
  --where <col=value>  only rows whose column equals the value (as in cellflow run)
  --where-json <list>  conditions as the API takes them`;

export const ROWS = `usage: cellflow rows delete <table> --where <col=value> [flags]

Deletes every row matching the conditions (at least one) and prints how many went; their
queued and running cells stop. The server deletes 5,000 rows per transaction: a delete
that fails midway keeps what it deleted, and running it again deletes the rest.

flags:
  --where <col=value>  only rows whose column equals the value (as in cellflow run);
                       repeat to AND them
  --where-json <list>  conditions as the API takes them`;

export const EVENTS = `usage: cellflow events <table> [--after <n>]

Prints the table's events as they happen, one JSON line each:
  {"id":42,"event":"cell","data":{"rowId":"…","groupId":"…","status":"running",…}}
Events are cell, dispatch, limit, schema, rows, progress (each group's counts, at most
once a second while cells change), and reset (the cursor was older than what the server
keeps); a kind added later is printed the same way. A dropped connection is reopened
where it left off.

flags:
  --after <n>          start after event n (0: everything the server still keeps);
                       default: from now

Runs until Ctrl-C (exit 0).`;
