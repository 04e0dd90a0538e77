"use client";
/**
 * The System page, for people who do not run Grafana: the workspace's active runs with
 * their pace and ETA, its queue and carriers, how long stamped cells wait for a carrier
 * and the providers' load (both deployment-wide, and said so), this month's credits by
 * source, and the newest cell errors, each a link that opens its cell in its table.
 * Live: `GET /api/system` read again every two seconds.
 */
import { Shell } from "../shell";
import { ago, credits, duration, latency, rate } from "./format";
import { type SystemView, useSystem } from "./use-system";

type Run = SystemView["runs"][number];

function RunRow({ r }: { r: Run }) {
  const pct = r.total > 0 ? Math.round((r.done / r.total) * 100) : 0;
  return (
    <tr data-testid="system-run" data-run-id={r.id} data-done={r.done} data-total={r.total}>
      <td>
        <a href={`/tables/${encodeURIComponent(r.tableId)}`}>{r.tableName}</a>
        <div className="muted">{r.groupIds.join(", ")}</div>
      </td>
      <td style={{ minWidth: 200 }}>
        <div className="progress">
          <div style={{ width: `${pct}%` }} />
        </div>
        <span className="muted" data-testid="system-run-done">
          {r.done.toLocaleString()} / {r.total.toLocaleString()}
          {r.stamping ? "+" : ""}
        </span>
        {r.errors > 0 && <span className="status-error"> · {r.errors} errors</span>}
      </td>
      <td data-testid="system-run-rate">{rate(r.cellsPerSecond)}</td>
      <td data-testid="system-run-eta">
        {r.etaSeconds === null ? "—" : `${r.stamping ? "≥ " : ""}${duration(r.etaSeconds)}`}
      </td>
      <td className="muted">
        {r.queued} queued · {r.running} running{r.paused > 0 ? ` · ${r.paused} paused` : ""}
      </td>
    </tr>
  );
}

function Runs({ runs }: { runs: Run[] }) {
  if (runs.length === 0)
    return (
      <p className="muted" data-testid="system-no-runs">
        No run in progress.
      </p>
    );
  return (
    <table className="table-list">
      <thead>
        <tr>
          <th>Table</th>
          <th>Done</th>
          <th>Rate</th>
          <th>ETA</th>
          <th>Cells</th>
        </tr>
      </thead>
      <tbody>
        {runs.map((r) => (
          <RunRow key={r.id} r={r} />
        ))}
      </tbody>
    </table>
  );
}

function Figure({ label, value, testId }: { label: string; value: string; testId: string }) {
  return (
    <div className="card system-figure">
      <div className="muted">{label}</div>
      <div className="system-figure-value" data-testid={testId}>
        {value}
      </div>
    </div>
  );
}

function Providers({ list }: { list: SystemView["providers"]["list"] }) {
  if (list.length === 0) return <p className="muted">No provider call yet.</p>;
  return (
    <table className="table-list">
      <thead>
        <tr>
          <th>Provider</th>
          <th>Calls</th>
          <th>Found</th>
          <th>Empty</th>
          <th>Errors</th>
          <th>Refused</th>
          <th>Cached</th>
          <th>Waits</th>
          <th>p99 wait</th>
        </tr>
      </thead>
      <tbody>
        {list.map((p) => (
          <tr key={p.provider} data-testid="system-provider" data-provider={p.provider}>
            <td>
              <code>{p.provider}</code>
            </td>
            <td>{p.calls.toLocaleString()}</td>
            <td>{p.found.toLocaleString()}</td>
            <td>{p.empty.toLocaleString()}</td>
            <td>{p.error.toLocaleString()}</td>
            <td>{p.refused.toLocaleString()}</td>
            <td>{p.cached.toLocaleString()}</td>
            <td>
              {p.waits.toLocaleString()}
              {p.waits > 0 && <span className="muted"> ({latency(p.waitSeconds)} in all)</span>}
            </td>
            <td>{latency(p.waitP99Seconds)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Credits({ c }: { c: SystemView["credits"] }) {
  return (
    <>
      <p data-testid="system-credits-used">
        {credits(c.used)} used{c.limit === null ? "" : ` of ${credits(c.limit)}`}
        {c.reserved > 0 && <span className="muted"> · {credits(c.reserved)} reserved</span>}
        <span className="muted"> · {c.month}</span>
      </p>
      {c.bySource.length > 0 && (
        <table className="table-list">
          <tbody>
            {c.bySource.map((s) => (
              <tr key={s.source} data-testid="system-credit-source">
                <td>
                  <code>{s.source}</code>
                </td>
                <td>{credits(s.credits)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

function Errors({ errors, now }: { errors: SystemView["errors"]; now: number }) {
  if (errors.length === 0) return <p className="muted">No cell in error.</p>;
  return (
    <table className="table-list">
      <thead>
        <tr>
          <th>When</th>
          <th>Table</th>
          <th>Column group</th>
          <th>Error</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {errors.map((e) => (
          <tr
            key={`${e.rowId}/${e.groupId}`}
            data-testid="system-error"
            data-row-id={e.rowId}
            data-group-id={e.groupId}
          >
            <td className="muted">{ago(e.finishedAt, now)}</td>
            <td>{e.tableName}</td>
            <td>{e.groupName ?? e.groupId}</td>
            <td className="status-error" style={{ whiteSpace: "pre-wrap" }}>
              {e.error ?? "The cell failed."}
            </td>
            <td>
              <a href={e.link} data-testid="system-error-link">
                Open cell
              </a>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function SystemPage() {
  const { view, error, reads } = useSystem();
  const now = view ? Date.parse(view.at) : Date.now();
  return (
    <Shell>
      <div className="page-head">
        <h1>System</h1>
        <div className="spacer" />
        <span className="live" data-testid="system-live" data-reads={reads}>
          <span className="dot" />{" "}
          {view ? `live · read ${new Date(now).toLocaleTimeString()}` : "…"}
        </span>
      </div>
      {error && (
        <div className="notice notice-error" role="alert" data-testid="system-error-notice">
          {error}
        </div>
      )}
      {!view && !error && <p className="muted">Loading…</p>}
      {view && (
        <div className="stack">
          <section>
            <h2>Runs in progress</h2>
            <Runs runs={view.runs} />
          </section>
          <section className="system-figures">
            <Figure
              label="Queue depth (cells queued)"
              value={view.queueDepth.toLocaleString()}
              testId="system-queue"
            />
            <Figure
              label="Carriers running"
              value={view.carriersRunning.toLocaleString()}
              testId="system-carriers"
            />
            <Figure
              label="Stamp → running p50 (all workspaces)"
              value={latency(view.stampToRunning.p50Seconds)}
              testId="system-stamp-p50"
            />
            <Figure
              label="Stamp → running p99 (all workspaces)"
              value={latency(view.stampToRunning.p99Seconds)}
              testId="system-stamp-p99"
            />
          </section>
          <section>
            <h2>Providers</h2>
            {view.providers.scope === "withheld" ? (
              <p className="muted" data-testid="system-providers-withheld">
                This deployment has other workspaces: its providers' load and claim latency are
                theirs too, so they are on the metrics endpoint (behind its token), not here.
              </p>
            ) : (
              <>
                <p className="muted">
                  Calls, refusals (429/503 with Retry-After) and rate-limit waits of all workspaces,
                  since the deployment's series began.
                </p>
                <Providers list={view.providers.list} />
              </>
            )}
          </section>
          <section>
            <h2>Credits this month</h2>
            <Credits c={view.credits} />
          </section>
          <section>
            <h2>Latest cell errors</h2>
            <Errors errors={view.errors} now={now} />
          </section>
        </div>
      )}
    </Shell>
  );
}
