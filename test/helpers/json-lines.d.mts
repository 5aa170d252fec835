import type { Duplex } from 'node:stream';

export function writeJsonLine(stream: Duplex, message: unknown): void;
export function onJsonLines<T>(
  stream: Duplex,
  receive: (message: T) => void,
): void;
