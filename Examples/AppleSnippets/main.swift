// One snippet per row of the "As written?" tables of PortingFromAVFoundation.md, each
// written as Apple's code writes it, with a `// row: NAME` line above it. Built by
// `swift build` (make test); AppleLayerTableTests checks every row has one. Not run.
import AVFoundation

print("AppleSnippets compiles the porting table's rows; it has nothing to run.")
