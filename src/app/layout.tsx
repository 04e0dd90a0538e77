import "./globals.css";
import type { ReactNode } from "react";

export const metadata = { title: "Cellflow", description: "Tables whose columns fill themselves" };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
