export default function Home() {
  return (
    <main style={{ maxWidth: 640, margin: "4rem auto", lineHeight: 1.5 }}>
      <h1>Cellflow</h1>
      <p>
        The API is served under <code>/api</code>. Check <a href="/api/health">/api/health</a>, then
        use the API key printed by <code>npm start</code> as{" "}
        <code>Authorization: Bearer &lt;key&gt;</code>.
      </p>
    </main>
  );
}
