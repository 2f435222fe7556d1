// Prints one plain closing line, "tests: N passed, N failed, N skipped", after a jest run.
export default class SummaryReporter {
  onRunComplete(_contexts, results) {
    process.stdout.write(
      `\ntests: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${results.numPendingTests + results.numTodoTests} skipped\n`,
    );
  }
}
