// Wiring only. The vault's behaviour (PFX import, encryption at rest, credentials for the ADN gateway)
// arrives with its own issue; until then every method answers UNIMPLEMENTED.
import { VaultService } from "../../libs/gen/malha/vault/v1/vault_pb.js";
import { runService } from "../../libs/rpc/run.js";
import { serve } from "../../libs/rpc/server.js";

await runService("vault", () => ({ services: [serve(VaultService, {})] }));
