// Polling for the Cobrança pages: the data of a page, re-read every few seconds while it is shown.
import { useEffect, useState } from "preact/hooks";
import { ApiFailure } from "./api.js";

/** Calls `load` now and every `ms`, until unmounted; a 401 signs out. */
export function usePolling(load: () => Promise<void>, ms: number, onSignedOut: () => void, deps: unknown[] = []): string {
  const [error, setError] = useState("");
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async () => {
      try {
        await load();
        if (!stopped) setError("");
      } catch (err) {
        if (err instanceof ApiFailure && err.status === 401) return onSignedOut();
        if (!stopped) setError(`Falha ao atualizar: ${(err as Error).message}`);
      }
      if (!stopped && ms > 0) timer = setTimeout(() => void tick(), ms);
    };
    void tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, deps);
  return error;
}
