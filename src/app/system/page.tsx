import { SystemPage } from "@/ui/system/SystemPage";

/** The workspace's System page: runs, queue, claims, providers, credits, cell errors, live. */
export default function System() {
  return <SystemPage />;
}
