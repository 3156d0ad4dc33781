// Who may call the ADN gateway: every method is open to the mesh, whose network is the boundary (the
// coordinator drives it). A new method is refused at start until it is added here.
// docs/decisions/0022-authentication-interceptor.md.
import type { AdnGatewayService } from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import type { AccessTable } from "../../libs/rpc/auth/access.js";

export const gatewayAccess: AccessTable<typeof AdnGatewayService> = {
  fetchBatch: "public",
  deliverFeeds: "public",
  fetchSingle: "public",
  getDocumentByChave: "public",
};
