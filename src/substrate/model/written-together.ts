/**
 * What the caller knows of how the ids were written: by one admission's stage. It decides how they are read (one
 * indexed query for the stage), never what is returned: an id written otherwise is still found, by lookup.
 */
export interface WrittenTogether {
  stageId?: string;
}
