"use client";
/** The frame of every signed-in page: the brand, the sections, sign-out. */
import { usePathname } from "next/navigation";
import type { ReactNode } from "react";
import { answer, api } from "./api";

const SECTIONS = [
  { href: "/tables", label: "Tables" },
  { href: "/workflows", label: "Workflows" },
  { href: "/enrichments", label: "Enrichments" },
  { href: "/system", label: "System" },
];

export function Shell({ children, wide = false }: { children: ReactNode; wide?: boolean }) {
  const path = usePathname() ?? "";
  const signOut = async () => {
    try {
      await answer(api.DELETE("/api/session"));
    } finally {
      window.location.assign("/signin");
    }
  };
  return (
    <>
      <header className="topbar">
        <a className="brand" href="/tables">
          <span className="brand-mark" /> Cellflow
        </a>
        <nav className="nav">
          {SECTIONS.map((s) => (
            <a key={s.href} href={s.href} className={path.startsWith(s.href) ? "active" : ""}>
              {s.label}
            </a>
          ))}
        </nav>
        <div className="spacer" />
        <button type="button" className="btn btn-ghost" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      <main className={wide ? "page-wide" : "page"}>{children}</main>
    </>
  );
}
