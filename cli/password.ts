import { readFileSync } from "node:fs";
import { UsageError } from "./exit-codes.js";
import type { Io } from "./io.js";

export const PASSWORD_ENV = "MALHA_PFX_PASSWORD";

/**
 * The PFX password, from (in order) --password-file, MALHA_PFX_PASSWORD or a prompt without echo. Never
 * from an argument: those end up in shell history and in `ps` for every user of the machine.
 */
export async function pfxPassword(io: Io, passwordFile: string | undefined): Promise<string> {
  if (passwordFile !== undefined) {
    try {
      // Editors and `echo` add a final newline that is never part of the password.
      return readFileSync(passwordFile, "utf8").replace(/\r?\n$/, "");
    } catch (err) {
      throw new UsageError(`--password-file cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"}: ${passwordFile})`);
    }
  }
  const fromEnv = io.env[PASSWORD_ENV];
  if (fromEnv !== undefined) return fromEnv;
  if (!io.promptSecret) {
    throw new UsageError(`no PFX password: use --password-file <file>, set ${PASSWORD_ENV}, or run on a terminal to be prompted`);
  }
  return io.promptSecret("PFX password: ");
}
