// A test worker: holds `mb` megabytes of JS objects at once (heap, not Buffers), then answers how many
// it held. Used to show a pool's heap limits reach its threads.
import { serveTasks } from "../index.js";

serveTasks<{ mb: number }, number, string>(
  ({ mb }) => {
    const held: number[][] = [];
    // An array of 131,072 small integers takes about 1 MB of heap.
    for (let i = 0; i < mb; i++) held.push(new Array<number>(131_072).fill(i));
    return held.length;
  },
  (err) => String(err),
);
