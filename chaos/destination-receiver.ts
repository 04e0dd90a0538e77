/**
 * The chaos run's destination receiver: a loopback http server that answers a delivery
 * after `latencyMs` (so deliveries are in flight when a worker is killed), drops the
 * connection of a `dropFraction` of calls (seeded) after reading the whole body, and
 * records every call for the judge (chaos/destination-judge.ts).
 */
import { createHash } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { parseSignatureHeader, signatureMatches } from "@/security/signature";
import type { ReceivedCall } from "./destination-judge";

export interface DestinationReceiver {
  url: string;
  calls: ReceivedCall[];
  /** Calls read and not yet answered or dropped. */
  inFlight(): number;
  secret: string;
  close(): Promise<void>;
}

function rowIdOf(raw: Buffer): string {
  try {
    const body = JSON.parse(raw.toString("utf8")) as { rowId?: unknown };
    return typeof body.rowId === "string" ? body.rowId : "";
  } catch {
    return "";
  }
}

export async function startDestinationReceiver(o: {
  latencyMs: number;
  dropFraction: number;
  random: () => number;
}): Promise<DestinationReceiver> {
  let pending = 0;
  const r = { calls: [] as ReceivedCall[], secret: "" };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      const sig = parseSignatureHeader(String(req.headers["cellflow-signature"] ?? ""));
      const drop = o.random() < o.dropFraction;
      const call: ReceivedCall = {
        id: String(req.headers["cellflow-delivery"] ?? ""),
        rowId: rowIdOf(raw),
        bodyHash: createHash("sha256").update(raw).digest("hex"),
        accepted: false,
        signed: sig !== null && signatureMatches(r.secret, sig, raw),
      };
      r.calls.push(call);
      pending++;
      setTimeout(() => {
        pending--;
        if (drop || req.socket.destroyed) {
          req.socket.destroy();
          return;
        }
        // Accepted only if the answer could be written: a sender killed meanwhile gets none.
        res.writeHead(200).end(() => {
          call.accepted = true;
        });
      }, o.latencyMs);
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  return {
    calls: r.calls,
    inFlight: () => pending,
    get secret() {
      return r.secret;
    },
    set secret(v: string) {
      r.secret = v;
    },
    url: `http://127.0.0.1:${port}/destination`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}
