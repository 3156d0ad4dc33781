export * from "./access.js";
export * from "./authorize.js";
export * from "./caller.js";
export * from "./interceptor.js";
export * from "./resolvers.js";
