// Test-only preload (`node --import tsx --import test/support/kill-at.ts`): the process SIGKILLs itself at
// the checkpoint named by MALHA_TEST_KILL_AT (libs/checkpoint), as a crash at the worst moment would.
import { CHECKPOINT_LISTENER } from "../../libs/checkpoint/index.js";

const at = process.env.MALHA_TEST_KILL_AT;
if (at) {
  (globalThis as { [CHECKPOINT_LISTENER]?: (name: string) => void })[CHECKPOINT_LISTENER] = (name) => {
    if (name === at) process.kill(process.pid, "SIGKILL");
  };
}

export const KILL_AT_HOOK = new URL(import.meta.url).pathname;
