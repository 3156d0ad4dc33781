// "Certificados": a municipality's certificates, and importing a PFX (administrators only).
import type { ImportCertificateBody } from "../api-types.js";
import { MAX_PFX_BYTES, type CertificatesView } from "../certificates-view.js";
import { badRequest, json, readJson, requireIbge } from "../http-kit.js";
import { get, post, type Route } from "../router.js";

/** Base64 grows a file by 4/3; the JSON around it is small. */
const MAX_IMPORT_BODY = Math.ceil((MAX_PFX_BYTES * 4) / 3) + 4096;

function parseImport(body: unknown): { pfx: Buffer; password: string } {
  const b = body as Partial<Record<keyof ImportCertificateBody, unknown>> | null;
  if (typeof b?.pfxBase64 !== "string" || b.pfxBase64 === "") throw badRequest("pfxBase64 is required");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b.pfxBase64)) throw badRequest("pfxBase64 is not base64");
  if (typeof b.password !== "string") throw badRequest("password is required (it may be empty)");
  if (b.password.length > 1024) throw badRequest("password is longer than 1024 characters");
  return { pfx: Buffer.from(b.pfxBase64, "base64"), password: b.password };
}

export function certificateRoutes(view: CertificatesView): Route[] {
  const PATH = /^\/api\/municipios\/([^/]+)\/certificados$/;
  return [
    get(PATH, async ({ res, params }) => json(res, 200, await view.list(requireIbge(params[0]!)))),
    post(PATH, "admin", "import a certificate", async ({ req, res, params, op, log }) => {
      const ibge = requireIbge(params[0]!);
      const { pfx, password } = parseImport(await readJson(req, MAX_IMPORT_BODY));
      let result: Awaited<ReturnType<CertificatesView["import"]>>;
      try {
        result = await view.import(`console:${op.user}`, ibge, pfx, password);
      } catch (err) {
        log.warn(
          { actor: op.user, action: "import-certificate", ibge, err: (err as Error).message },
          "console action refused by the vault",
        );
        throw err;
      }
      log.info(
        {
          actor: op.user,
          action: "import-certificate",
          ibge,
          certificateId: result.certificate.id,
          fingerprint: result.certificate.fingerprint,
          created: result.created,
          activated: result.activated,
        },
        "console action",
      );
      json(res, 200, result);
    }),
  ];
}
