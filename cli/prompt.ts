import { createInterface } from "node:readline";

/** Reads one line from the terminal without echoing it (the PFX password prompt). */
export function promptSecret(question: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    // readline echoes through _writeToOutput; muting it after the question hides what is typed.
    const internal = rl as unknown as { _writeToOutput: (s: string) => void };
    process.stderr.write(question);
    internal._writeToOutput = () => undefined;
    rl.question("", (answer) => {
      rl.close();
      process.stderr.write("\n");
      resolve(answer);
    });
    rl.once("SIGINT", () => {
      rl.close();
      reject(new Error("cancelled"));
    });
  });
}
