export {
  type NonRegularFileType,
  type OpenedRegularFile,
  type RegularFileRead,
  type RegularFileReadAsyncOptions,
  type RegularFileReadOptions,
  readRegularFile,
  readRegularFileSync,
  utf8Text,
} from './read-regular-file.js';
