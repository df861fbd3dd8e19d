/**
 * A chat's conversation: one exchange (the user's message and the agent's final answer) per
 * finished invocation, as one JSON blob per chat. Resetting the conversation removes the blob.
 */
import type { BlobStore } from '../blobs/blob-store';
import { chatHistoryKey } from '../common/agent-invocation';
import { ownJson } from '../common/narrow';

export interface ChatExchange {
  invocationId: string;
  user: string;
  assistant: string;
  at: string;
}

// Written only by the agent activities from values they built.
export async function readChatHistory(blobs: BlobStore, orgId: string, chatId: string): Promise<ChatExchange[]> {
  const data = await blobs.read(chatHistoryKey(orgId, chatId));
  return data === undefined ? [] : ownJson<ChatExchange[]>(data.toString('utf8'));
}
