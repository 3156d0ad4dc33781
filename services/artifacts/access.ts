// Who may call artifacts: every method is open to the mesh, whose network is the boundary (billing and
// danfse keep their files here; download links carry their own signature). A new method is refused at
// start until it is added here. docs/decisions/0022-authentication-interceptor.md.
import type { ArtifactsService } from "../../libs/gen/malha/artifacts/v1/artifacts_pb.js";
import type { AccessTable } from "../../libs/rpc/auth/access.js";

export const artifactsAccess: AccessTable<typeof ArtifactsService> = {
  putArtifact: "public",
  putArtifacts: "public",
  getArtifact: "public",
  statArtifact: "public",
  listArtifacts: "public",
  createDownloadLink: "public",
  createDownloadLinks: "public",
  composeZip: "public",
};
