// Wiring only. The ADN client (mTLS per certificate, retries, parsing) arrives with its own issue;
// until then every method answers UNIMPLEMENTED.
import { AdnGatewayService } from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import { runService } from "../../libs/rpc/run.js";
import { serve } from "../../libs/rpc/server.js";

await runService("adn-gateway", () => ({ services: [serve(AdnGatewayService, {})] }));
