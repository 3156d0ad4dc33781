import type { DescMessage, Message } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { createValidator, violationsToProto, type Validator } from "@bufbuild/protovalidate";

/**
 * Enforces the `buf.validate` rules the protos declare (lengths, ranges, enum values inside the declared
 * set, required fields) on every request message before a handler sees it, so the contract clients read
 * is the one the servers apply. A violation answers INVALID_ARGUMENT naming the field path
 * (`items[0].valor_cents: must be greater than 0 [int64.gt]`) with buf.validate.Violations as detail.
 * Rules that need code (check digits, bank rules) stay in the domain libraries.
 */
export function validationInterceptor(validator: Validator = createValidator()): Interceptor {
  return (next) => async (req) => {
    if (!req.stream) {
      check(validator, req.method.input, req.message);
      return next(req);
    }
    const input = req.method.input;
    const source = req.message;
    return next({
      ...req,
      message: (async function* () {
        for await (const m of source) {
          check(validator, input, m);
          yield m;
        }
      })(),
    });
  };
}

function check(validator: Validator, schema: DescMessage, message: Message): void {
  const result = validator.validate(schema, message);
  if (result.kind === "valid") return;
  if (result.kind === "invalid") {
    const [violations, desc] = violationsToProto(result.error.violations);
    throw new ConnectError(result.error.message, Code.InvalidArgument, undefined, [{ desc, value: violations }]);
  }
  // A rule that does not compile or evaluate is our defect, not the caller's.
  throw result.error;
}
