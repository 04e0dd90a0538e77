/**
 * The `cellflow` process (bin/cellflow.mjs runs it through tsx): wires signals and the
 * standard streams to `cli`, and exits with its code as soon as the output is flushed.
 */
import { cli } from "./cli";
import { EXIT } from "./failure";

async function main(): Promise<void> {
  const interrupt = new AbortController();
  let claimed = false;
  // The first Ctrl-C is the command's to handle when it claimed it (a follow detaches, a
  // tail ends); otherwise, or the second time, it ends the process as Ctrl-C always does.
  const onSignal = (signal: NodeJS.Signals) => {
    if (!claimed || interrupt.signal.aborted) process.exit(EXIT.interrupted);
    interrupt.abort(signal);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  // A reader that went away (`cellflow export t | head`) is not an error of ours.
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") process.exit(EXIT.ok);
  });
  const code = await cli(process.argv.slice(2), {
    env: process.env,
    stdout: process.stdout,
    stderr: process.stderr,
    interrupted: interrupt.signal,
    claimInterrupt: () => {
      claimed = true;
    },
  });
  process.exitCode = code;
  // Open sockets (a keep-alive connection, an event stream being closed) must not hold the
  // exit back once the answer is out.
  process.stdout.write("", () => process.exit(code));
}

await main();
