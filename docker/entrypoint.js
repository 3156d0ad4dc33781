// The image's entrypoint: `docker run malha <service> [args]` runs the compiled service (or one of the
// operator scripts) in this same process, so SIGTERM reaches the service's own graceful shutdown and the
// exit code (78 on bad configuration) is the container's. Plain JS: it must run with no build step.
import { existsSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";

export const SERVICES = ["vault", "adn-gateway", "store", "artifacts", "coordinator", "billing", "console", "danfse"];
const SCRIPTS = { migrate: "dist/scripts/migrate.js", malha: "dist/cli/main.js" };
/** sysexits EX_USAGE: the container was started with a name that is not ours. */
const EX_USAGE = 64;

export function targetOf(name) {
  if (SERVICES.includes(name)) return `dist/services/${name}/main.js`;
  return Object.hasOwn(SCRIPTS, name) ? SCRIPTS[name] : undefined;
}

function usage() {
  return `usage: <${SERVICES.join("|")}> | migrate [dir] | malha <command…>`;
}

async function main() {
  const name = process.argv[2];
  if (name === undefined || name === "help" || name === "--help") {
    process.stdout.write(`${usage()}\n`);
    return name === undefined ? EX_USAGE : 0;
  }
  const target = targetOf(name);
  if (target === undefined) {
    process.stderr.write(`entrypoint: unknown service "${name}"; ${usage()}\n`);
    return EX_USAGE;
  }
  const file = fileURLToPath(new URL(`../${target}`, import.meta.url));
  if (!existsSync(file)) {
    process.stderr.write(`entrypoint: ${target} is missing; run \`npm run build\` first\n`);
    return 1;
  }
  // The target reads its own arguments from process.argv.slice(2), as if started directly.
  process.argv.splice(1, 2, file);
  await import(pathToFileURL(file).href);
  return undefined;
}

const isMain = process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1];
if (isMain) {
  const code = await main();
  if (code !== undefined) process.exitCode = code;
}
