// Who may call danfse: every method is open to the mesh, whose network is the boundary. A new method
// is refused at start until it is added here. docs/decisions/0022-authentication-interceptor.md.
import type { DanfseService } from "../../libs/gen/malha/danfse/v1/danfse_pb.js";
import type { AccessTable } from "../../libs/rpc/auth/access.js";

export const danfseAccess: AccessTable<typeof DanfseService> = {
  getDanfse: "public",
  createDanfseExport: "public",
  getDanfseExport: "public",
};
