// The contract package is private, so the SDK bundles its code and inlines its types. tsup's
// declaration build treats every package in `dependencies` as external (it ignores `dts.resolve`
// for them), so the contract is imported by relative path here, the SDK's only import of it.
export * from '../../contract/src/index.js';
