/** How a chat-completions body reaches an OpenAI-compatible server and its JSON comes back. */
export interface ChatTransport {
  readonly endpoint: string;
  /** Resolves with the parsed JSON body of a 2xx answer; rejects with a JUDGE_* RubricateError. */
  postChatCompletion(body: Record<string, unknown>, signal: AbortSignal): Promise<unknown>;
  close(): void;
}
