import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// Lives in test/ to keep the repository root to its documented entries; the root is one level up.
export default defineConfig({
  test: {
    root: fileURLToPath(new URL("..", import.meta.url)),
    include: [
      "libs/**/*.test.ts",
      "services/**/*.test.ts",
      "scripts/**/*.test.ts",
      "test/**/*.test.ts",
      "deploy/**/*.test.ts",
      "docker/**/*.test.ts",
    ],
    exclude: ["**/node_modules/**", "dist/**"],
    // Tests start real servers and child processes: generous limits, no wall-clock assertions.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    reporters: ["default"],
  },
});
