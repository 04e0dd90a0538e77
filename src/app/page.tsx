import { redirect } from "next/navigation";

/** The root sends people to their tables; pages there send them to sign-in when needed. */
export default function Home() {
  redirect("/tables");
}
