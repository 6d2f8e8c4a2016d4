// The handoff tool as LangGraph's multi-agent docs write it, shared by the
// hand-written LangGraph programs and the random plans.
import { tool } from '@langchain/core/tools';
import { ToolMessage } from '@langchain/core/messages';
import { Command, getCurrentTaskInput, MessagesAnnotation } from '@langchain/langgraph';
import * as z from 'zod';

/** A handoff tool as LangGraph's multi-agent docs write it: a ToolMessage for the call, and a Command to the parent graph. */
export function createHandoffTool(agentName: string) {
  const toolName = `transfer_to_${agentName}`;
  return tool(
    async (_, config) => {
      const toolMessage = new ToolMessage({ content: `Successfully transferred to ${agentName}`, name: toolName, tool_call_id: config.toolCall!.id! });
      const state = getCurrentTaskInput() as typeof MessagesAnnotation.State;
      return new Command({ goto: agentName, update: { messages: state.messages.concat(toolMessage) }, graph: Command.PARENT });
    },
    { name: toolName, schema: z.object({}), description: `Ask agent '${agentName}' for help` },
  );
}
