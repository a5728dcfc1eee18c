// `import PromiseKit` for code written for PromiseKit 8: this module is the
// `Promises` library under PromiseKit's module name, so that such code —
// module-qualified names such as `PromiseKit.Result<Int>` and
// `PromiseKit.conf.Q` included — compiles without a changed line.
@_exported import Promises
