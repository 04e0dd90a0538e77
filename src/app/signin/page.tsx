"use client";
/**
 * Sign-in with an API key. The key goes to `POST /api/session`, which keeps it in an
 * httpOnly cookie; the page never stores it. `npm start` prints a link with the key in
 * the URL fragment (`/signin#key=…`): fragments never reach the server or its logs, and
 * the page removes it from the address bar before signing in.
 */
import { useEffect, useState } from "react";
import { answer, api, describeError } from "@/ui/api";

function nextPath(): string {
  const next = new URLSearchParams(window.location.search).get("next");
  // Only paths on this site: an open redirect would make the sign-in page a phishing aid.
  return next?.startsWith("/") && !next.startsWith("//") ? next : "/tables";
}

export default function SignIn() {
  const [key, setKey] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const signIn = async (apiKey: string) => {
    setBusy(true);
    setError(null);
    try {
      await answer(api.POST("/api/session", { body: { apiKey: apiKey.trim() } }));
      window.location.replace(nextPath());
    } catch (err) {
      setError(describeError(err));
      setBusy(false);
    }
  };

  // biome-ignore lint/correctness/useExhaustiveDependencies: once, on arrival
  useEffect(() => {
    const fromLink = new URLSearchParams(window.location.hash.slice(1)).get("key");
    if (fromLink) {
      window.history.replaceState(null, "", window.location.pathname + window.location.search);
      void signIn(fromLink);
    }
  }, []);

  return (
    <main className="signin">
      <form
        className="card signin-card"
        onSubmit={(e) => {
          e.preventDefault();
          void signIn(key);
        }}
      >
        <div className="brand" style={{ marginBottom: 16 }}>
          <span className="brand-mark" /> Cellflow
        </div>
        <h1 style={{ marginBottom: 4 }}>Sign in</h1>
        <p className="muted" style={{ marginTop: 0 }}>
          Use your workspace's API key. <code>npm start</code> prints a link that signs you in
          directly.
        </p>
        <div className="field">
          <label htmlFor="api-key">API key</label>
          <input
            id="api-key"
            name="apiKey"
            className={`input ${error ? "invalid" : ""}`}
            type="password"
            autoComplete="current-password"
            value={key}
            onChange={(e) => setKey(e.target.value)}
            placeholder="cf_…"
            required
          />
          {error && <span className="field-error">{error}</span>}
        </div>
        <button className="btn btn-primary" type="submit" disabled={busy || key.trim() === ""}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
    </main>
  );
}
