// Named points in a service's work where a crash hurts most (after an item's artifact is stored, after a
// zip is uploaded). Code announces them; nothing happens unless a test preloaded a hook (node --import)
// that listens, such as test/support/kill-at.ts, which SIGKILLs the process at the point a test names. The
// switch that makes a process kill itself therefore never ships: production registers no listener.
export const CHECKPOINT_LISTENER = Symbol.for("malha.checkpoint");

type Listener = (name: string) => void;

export function checkpoint(name: string): void {
  const listener = (globalThis as { [CHECKPOINT_LISTENER]?: Listener })[CHECKPOINT_LISTENER];
  if (listener) listener(name);
}
