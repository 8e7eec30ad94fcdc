// The Swift snippets of the DocC articles (Sources/SwiftRecord/SwiftRecord.docc), compiled
// so the documentation cannot rot. Each ```swift block of an article appears, line for line
// (indentation aside), in one of this folder's files, inside a function that is never
// called: DocCSnippetTests checks that every block is here, and `swift build --build-tests`
// builds this target. Lines around a block (the function, set-up an article shows in an
// earlier block) are the compiled file's own.
print("DocSnippets is only compiled; the articles' snippets are in functions that are not run.")
