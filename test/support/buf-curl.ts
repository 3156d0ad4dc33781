import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BUF = `${ROOT}node_modules/.bin/buf`;

export interface BufCurlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `buf curl` (the npm-pinned binary) against a server using reflection only: no local protos. */
export function bufCurl(args: string[]): Promise<BufCurlResult> {
  return new Promise((resolve) => {
    execFile(BUF, ["curl", "--protocol", "grpc", "--http2-prior-knowledge", ...args], { cwd: "/" }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}
