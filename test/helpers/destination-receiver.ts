/**
 * A destination's receiver for tests: a local http server that records every delivery
 * (its `Cellflow-Delivery` id, raw body and whether its signature verifies against the
 * secret given) and answers as the test says: a status, a hang (the sender's timeout),
 * or a dropped connection, after `latencyMs` if given (so calls are in flight when a
 * sender is killed: the chaos scenario). It can be closed and started again on the same
 * port.
 */
import { createHash } from "node:crypto";
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { parseSignatureHeader, signatureMatches } from "@/security/signature";

export interface Received {
  id: string;
  body: string;
  bodyHash: string;
  /** Null until a secret is known (`receiver.secret = …`). */
  signed: boolean | null;
  answered: number | "hang" | "drop";
  /** A 2xx answer was written (the sender was still there to take it). */
  accepted: boolean;
}

export type Answer = number | "hang" | "drop";

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  secret: string | null;
  answer: (call: number, id: string) => Answer;
  /** Calls waiting out the receiver's latency (not yet answered, dropped or hung). */
  inFlight(): number;
  /** Releases every hanging request with this status. */
  release(status: number): void;
  close(): Promise<void>;
  restart(): Promise<void>;
}

export async function startReceiver(port = 0, o: { latencyMs?: number } = {}): Promise<Receiver> {
  const hanging: http.ServerResponse[] = [];
  let calls = 0;
  let pending = 0;
  const r: Receiver = {
    url: "",
    port,
    received: [],
    secret: null,
    answer: () => 200,
    inFlight: () => pending,
    release(status) {
      for (const res of hanging.splice(0)) if (!res.writableEnded) res.writeHead(status).end();
    },
    close: async () => {
      r.release(503);
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    },
    restart: async () => {
      server = make();
      await listen(r.port);
    },
  };
  // Connections whose sender hung up (a killed process): a call on one is cut, not
  // answered, even though writing the answer into the closed socket may still succeed.
  const gone = new WeakSet<Socket>();
  const make = () =>
    http
      .createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on("data", (c: Buffer) => chunks.push(c));
        req.on("end", () => {
          const raw = Buffer.concat(chunks);
          const id = String(req.headers["cellflow-delivery"] ?? "");
          const sig = parseSignatureHeader(String(req.headers["cellflow-signature"] ?? ""));
          const answered = r.answer(++calls, id);
          const got: Received = {
            id,
            body: raw.toString("utf8"),
            bodyHash: createHash("sha256").update(raw).digest("hex"),
            signed: r.secret === null ? null : sig !== null && signatureMatches(r.secret, sig, raw),
            answered,
            accepted: false,
          };
          r.received.push(got);
          const reply = () => {
            if (answered === "drop" || gone.has(req.socket) || req.socket.destroyed)
              req.socket.destroy();
            else if (answered === "hang") hanging.push(res);
            else
              res.writeHead(answered).end(() => {
                got.accepted = answered >= 200 && answered < 300;
              });
          };
          if (!o.latencyMs) return reply();
          pending++;
          setTimeout(() => {
            pending--;
            reply();
          }, o.latencyMs);
        });
      })
      .on("connection", (socket: Socket) => {
        socket.once("end", () => gone.add(socket));
        socket.once("close", () => gone.add(socket));
      });
  let server = make();
  const listen = (p: number) =>
    new Promise<void>((done) => {
      server.listen(p, "127.0.0.1", () => {
        r.port = (server.address() as AddressInfo).port;
        r.url = `http://127.0.0.1:${r.port}/hook`;
        done();
      });
    });
  await listen(port);
  return r;
}
