import { fuzzPart } from './fuzz-share.js';

fuzzPart(4);
