// The registered municipalities (names and UFs) for the pages' pickers and filters.
import { json } from "../http-kit.js";
import type { MunicipioDirectory } from "../municipios.js";
import { get, type Route } from "../router.js";

export function municipioRoutes(municipios: MunicipioDirectory): Route[] {
  return [get(/^\/api\/municipios$/, async ({ res }) => json(res, 200, { municipios: await municipios.list() }))];
}
