// The CobrancaError a call throws, for tests that check which code and field refused an input.
import { CobrancaError } from "../errors.js";

export function refusalOf(fn: () => unknown): CobrancaError {
  try {
    fn();
  } catch (e) {
    if (e instanceof CobrancaError) return e;
    throw new Error(`expected a CobrancaError, got ${String(e)}`);
  }
  throw new Error("expected a CobrancaError");
}
