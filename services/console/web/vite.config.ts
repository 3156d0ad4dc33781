// Builds the console's web app into dist/console (served by services/console). Offline by construction:
// everything is bundled, nothing is loaded from a CDN.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const root = fileURLToPath(new URL(".", import.meta.url));

export default defineConfig({
  root,
  base: "/",
  logLevel: "warn",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: fileURLToPath(new URL("../../../dist/console", import.meta.url)),
    emptyOutDir: true,
    sourcemap: false,
  },
});
