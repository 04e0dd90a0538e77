/**
 * The browser's client for the Cellflow API. Signed-in pages authenticate with the
 * httpOnly session cookie; every request carries `x-cellflow-ui: 1`, which the API
 * requires of cookie-authenticated writes (a cross-site page cannot send it), and
 * errors come back as `ApiError` with the API's code, message and field issues.
 */

export interface Issue {
  path: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly issues: Issue[] = [],
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export const UI_HEADER = { "x-cellflow-ui": "1" } as const;

interface ErrorBody {
  error?: { code?: string; message?: string; issues?: Issue[] };
}

async function toError(res: Response): Promise<ApiError> {
  let body: ErrorBody = {};
  try {
    body = (await res.json()) as ErrorBody;
  } catch {
    // Not JSON (a proxy's page): the status says enough.
  }
  const e = body.error ?? {};
  return new ApiError(
    res.status,
    e.code ?? "internal",
    e.message ?? `The server answered ${res.status}`,
    e.issues ?? [],
  );
}

/** When the session is gone, every page goes back to sign-in. */
function onUnauthorized(): void {
  if (typeof window !== "undefined" && !window.location.pathname.startsWith("/signin")) {
    const back = encodeURIComponent(window.location.pathname + window.location.search);
    window.location.assign(`/signin?next=${back}`);
  }
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(path, {
    method,
    credentials: "same-origin",
    headers: {
      ...UI_HEADER,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  if (res.status === 401) onUnauthorized();
  if (!res.ok) throw await toError(res);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

/**
 * Uploads text (a CSV file) with upload progress, which fetch cannot report.
 * `onProgress` gets the fraction sent, 0…1.
 */
export function upload<T>(
  path: string,
  body: Blob,
  contentType: string,
  onProgress: (fraction: number) => void,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", path);
    xhr.withCredentials = true;
    xhr.setRequestHeader("content-type", contentType);
    xhr.setRequestHeader("x-cellflow-ui", "1");
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    };
    xhr.onerror = () => reject(new ApiError(0, "network", "The upload did not reach the server"));
    xhr.onload = () => {
      const res = new Response(xhr.responseText, {
        status: xhr.status,
        headers: { "content-type": xhr.getResponseHeader("content-type") ?? "" },
      });
      if (xhr.status === 401) onUnauthorized();
      if (xhr.status >= 200 && xhr.status < 300) {
        res.json().then((v) => resolve(v as T), reject);
      } else {
        toError(res).then(reject, reject);
      }
    };
    xhr.send(body);
  });
}

/** A refusal for people: its message, then each issue with where it is. */
export function describeRefusal(refusal: { message: string; issues: readonly Issue[] }): string {
  const issues = refusal.issues.map((i) => `${i.path ? `${i.path}: ` : ""}${i.message}`);
  return issues.length > 0 ? `${refusal.message} — ${issues.join("; ")}` : refusal.message;
}

/** A message for people, with field issues when the API gave some. */
export function describeError(err: unknown): string {
  if (err instanceof ApiError) return describeRefusal(err);
  return err instanceof Error ? err.message : String(err);
}
