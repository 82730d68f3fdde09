export {
  type NonRegularFileType,
  type OpenedRegularFile,
  type RegularFileRead,
  type RegularFileReadAsyncOptions,
  type RegularFileReadOptions,
  type RegularFileSystem,
  readRegularFile,
  readRegularFileSync,
  utf8Text,
} from './read-regular-file.js';
