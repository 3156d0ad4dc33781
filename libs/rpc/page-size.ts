// The page_size rule of every List RPC: 0 asks for the method's default, a larger value is clamped to
// its maximum, and a negative one is the caller's mistake (INVALID_ARGUMENT naming the field), never a
// silent default.
import { Code, ConnectError } from "@connectrpc/connect";

export interface PageLimits {
  /** Page size when the caller sends 0. */
  default: number;
  max: number;
}

/** The methods whose contract says "0 = 50, clamped to 500". */
export const DEFAULT_PAGE: PageLimits = { default: 50, max: 500 };

export function pageSizeOf(requested: number, limits: PageLimits = DEFAULT_PAGE): number {
  if (!Number.isInteger(requested) || requested < 0)
    throw new ConnectError(`page_size must not be negative (got ${requested})`, Code.InvalidArgument);
  return requested === 0 ? limits.default : Math.min(requested, limits.max);
}
