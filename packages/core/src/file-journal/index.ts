export {
  FileRunJournal,
  type FileRunJournalOptions,
  type JournaledRunSummary,
} from './file-run-journal.js';
