/**
 * Scenario: destinations under faults. The chain workload's table has a destination whose
 * receiver answers after `latencyMs` and drops the connection of a fraction of its calls;
 * while the run goes on, every worker (each sends the outbox) is SIGKILLed at once while
 * deliveries are in flight, `kills` times, and restarted. After the run, the outbox must
 * empty (the dead worker's leased deliveries are re-sent once their leases run out), and
 * the judge (chaos/destination-judge.ts) must find every finished row accepted at least
 * once with its latest body finished, every outbox entry delivered and accepted, none
 * failed, and no delivery id sent with two bodies.
 */
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import { newId } from "@/domain/ids";
import { sleep } from "@/domain/sleep";
import { mintSigningSecret } from "@/security/signing-secret";
import { insertDestination } from "@/store/destinations/crud";
import { type Received, startReceiver } from "../../test/helpers/destination-receiver";
import { type ChainOptions, type ChainResult, runChain } from "../chain-run";
import {
  type DestinationVerdict,
  judgeDestination,
  type OutboxEntry,
  type ReceivedCall,
} from "../destination-judge";

export interface DestinationKillOptions extends Omit<ChainOptions, "faults" | "prepare"> {
  kills: number;
  random: () => number;
  /** The receiver's answer latency: deliveries are in flight this long. */
  latencyMs: number;
  dropFraction: number;
  /** How long after the run the outbox may take to empty (leases of the killed run out). */
  drainTimeoutMs: number;
}

export interface DestinationKillResult extends ChainResult {
  destination: DestinationVerdict;
  /** From the run's end until the outbox was empty. */
  drainedAfterMs: number | null;
}

export async function destinationKill(
  opts: DestinationKillOptions,
): Promise<DestinationKillResult> {
  const receiver = await startReceiver(0, { latencyMs: opts.latencyMs });
  receiver.answer = () => (opts.random() < opts.dropFraction ? "drop" : 200);
  let tableId = "";
  let drainedAfterMs: number | null = null;
  let finished: string[] = [];
  let outbox: OutboxEntry[] = [];
  try {
    const chain = await runChain({
      ...opts,
      // Retries come fast, so a dropped call is sent again within the run.
      env: { CELLFLOW_DESTINATION_RETRY_BASE_MS: "200", ...opts.env },
      prepare: async (db, table) => {
        tableId = table.tableId;
        const { secret, ciphertext } = mintSigningSecret("destination secrets");
        receiver.secret = secret;
        await insertDestination(db, {
          id: newId("dst"),
          workspaceId: table.workspaceId,
          tableId: table.tableId,
          url: receiver.url,
          name: "chaos receiver",
          secretCiphertext: ciphertext,
        });
      },
      faults: async (run) => {
        for (let k = 0; k < opts.kills; k++) {
          const p = 0.2 + (0.6 * (k + opts.random() * 0.5)) / Math.max(opts.kills, 1);
          const reached = await run.monitor.waitForTerminal(
            Math.floor(p * run.cells),
            opts.timeoutMs,
          );
          if (!reached) break;
          // Mid-delivery: wait (briefly) for a call the receiver holds.
          const until = Date.now() + 5_000;
          while (receiver.inFlight() === 0 && Date.now() < until) await sleep(5);
          // Every worker at once, as a crashed server: each worker sends, so whichever
          // holds the calls in flight dies with them (one random slot may hold none).
          const f = run.fault("server SIGKILL mid-delivery (every worker)", {
            atFraction: +p.toFixed(3),
            deliveriesInFlight: receiver.inFlight(),
          });
          const slots = Array.from({ length: run.pool.size }, (_, slot) => slot);
          f.detail.pids = await Promise.all(slots.map((slot) => run.pool.kill(slot)));
          await sleep(1_000);
          for (const slot of slots) await run.pool.restart(slot);
          f.wallEnd = Date.now();
        }
        // The workers stay up until this resolves: wait for the run, then the outbox.
        await run.monitor.waitForEnd(opts.timeoutMs);
        const ended = Date.now();
        const deadline = ended + opts.drainTimeoutMs;
        while (Date.now() < deadline) {
          const [left] = await queryRows<{ n: number }>(
            run.db,
            sql`select (select count(*) from destination_marks)
                     + (select count(*) from destination_deliveries where status = 'pending')
                     + (select count(*) from cells where table_id = ${run.tableId}
                          and status in ('queued', 'running', 'paused')) as n`,
          );
          if (Number(left?.n ?? 1) === 0) {
            drainedAfterMs = Date.now() - ended;
            break;
          }
          await sleep(250);
        }
        finished = (
          await queryRows<{ id: string }>(
            run.db,
            sql`select r.id from rows r where r.table_id = ${run.tableId}
                 and not exists (select 1 from cells c where c.row_id = r.id
                                  and c.status in ('queued', 'running', 'paused'))`,
          )
        ).map((r) => r.id);
        outbox = await queryRows<OutboxEntry>(
          run.db,
          sql`select x.id, x.row_id as "rowId", x.seq, x.status::text as status
                from destination_deliveries x join destinations d on d.id = x.destination_id
               where d.table_id = ${run.tableId}`,
        );
      },
    });
    const destination = judgeDestination(finished, receiver.received.map(callOf), outbox);
    const problems = [...chain.problems, ...destination.problems];
    if (drainedAfterMs === null)
      problems.push(
        `the outbox of table ${tableId} did not empty within ${opts.drainTimeoutMs} ms`,
      );
    return { ...chain, destination, drainedAfterMs, problems };
  } finally {
    await receiver.close();
  }
}

const ACTIVE = new Set(["queued", "running", "paused"]);

function callOf(r: Received): ReceivedCall {
  let rowId = "";
  let activeCells = 0;
  try {
    const body = JSON.parse(r.body) as { rowId?: unknown; cells?: Record<string, unknown> };
    if (typeof body.rowId === "string") rowId = body.rowId;
    for (const c of Object.values(body.cells ?? {}))
      if (ACTIVE.has(String((c as { status?: unknown } | null)?.status))) activeCells++;
  } catch {
    // An unparsable body: no row, judged undelivered.
  }
  return {
    id: r.id,
    rowId,
    bodyHash: r.bodyHash,
    accepted: r.accepted,
    dropped: r.answered === "drop",
    signed: r.signed === true,
    activeCells,
  };
}
