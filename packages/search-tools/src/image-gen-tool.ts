import {
  type ContentBlock,
  type ImageBlock,
  textBlock,
  type ToolContext,
  type ToolResponse,
} from '@quiver/core';
import { defineTool, type Tool, type ToolFactory } from '@quiver/core-registry';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import {
  countMessage,
  createImageGenerator,
  type GeneratedImage,
  type ImageGenerationResult,
  type ImageGenerator,
  type ImageGeneratorOptions,
  IMAGE_SIDE_LIMITS,
  parseImageSize,
} from './image-generation.js';

/** Options of {@link createImageGenTool}: a ready {@link ImageGenerator}, or options to make one. */
export interface ImageGenToolOptions extends ImageGeneratorOptions {
  /** Use this generator (its endpoint, model and lifecycle) instead of creating one. */
  generator?: ImageGenerator;
  /**
   * Also put each image's bytes in its block as base64 `data`, for models that look at images
   * (default false: blocks carry the saved `path`).
   */
  inlineImages?: boolean;
}

/** Arguments of the `image_gen` tool. */
export interface ImageGenArguments {
  prompt: string;
  n?: number;
  size?: string;
}

/**
 * The `image_gen` tool: generates images from a text prompt through an OpenAI-compatible images
 * API (OpenAI, DashScope/Qwen, gateways) and returns them as image blocks whose bytes are saved
 * in the call's `workDir` (or `outputDir`), never only as a link that expires.
 *
 * @param options - A generator, or options for `createImageGenerator` (endpoint, key, model, sizes).
 * @returns A tool for a Toolkit.
 * @throws {ConfigurationError} naming `QUIVER_IMAGE_API_KEY` when no key is configured.
 * @example
 * toolkit.register(createImageGenTool({ model: 'dall-e-3', sizes: ['1024x1024', '1792x1024'], maxImages: 1 }));
 * await toolkit.callToCompletion({ id: '1', name: 'image_gen', arguments: '{"prompt":"a red fox"}' }, { workDir: '/tmp/run' });
 */
export function createImageGenTool(options: ImageGenToolOptions = {}): Tool<ImageGenArguments> {
  const generator = options.generator ?? createImageGenerator(options);
  const { maxImages, sizes } = generator;
  const sizeHelp =
    sizes !== undefined && sizes.length > 0
      ? `One of: ${sizes.join(', ')}.`
      : `WIDTHxHEIGHT in pixels, each side ${IMAGE_SIDE_LIMITS.min}-${IMAGE_SIDE_LIMITS.max}, e.g. 1024x1024.`;
  const parameters = z.object({
    prompt: z
      .string()
      .max(4000, { error: 'The prompt is longer than 4000 characters: shorten it.' })
      .refine((prompt) => prompt.trim() !== '', {
        error: 'The prompt is empty: describe the image to generate.',
      })
      .describe(
        'What the image should show: subject, style, composition, colours, any text to render.',
      ),
    n: z
      .number({ error: countMessage(maxImages) })
      .int({ error: countMessage(maxImages) })
      .min(1, { error: countMessage(maxImages) })
      .max(maxImages, { error: countMessage(maxImages) })
      .optional()
      .describe(`How many images, 1 to ${maxImages} (default 1).`),
    size: z
      .string()
      .superRefine((size, context) => {
        const parsed = parseImageSize(size, sizes);
        if ('error' in parsed) context.addIssue({ code: 'custom', message: parsed.error });
      })
      .optional()
      .describe(`Image size. ${sizeHelp} Leave out for the model's default.`),
  });

  return defineTool({
    name: 'image_gen',
    description: {
      en: `Generate images from a text description with ${generator.model}. The images are saved as files and returned as images. Write a detailed prompt (subject, style, composition, colours); use it when the user asks to draw, paint or create a picture.`,
      zh: `使用 ${generator.model} 根据文字描述生成图片。图片会保存为文件并以图片形式返回。提示词应尽量具体（主体、风格、构图、色彩）；当用户要求画图、绘制或生成图片时使用。`,
    },
    parameters,
    flags: { networkAccess: true, fileAccess: true, sideEffects: true },
    timeoutMs: 180_000,
    async execute(args, context: ToolContext): Promise<ToolResponse> {
      const result = await generator.generate(
        {
          prompt: args.prompt,
          ...(args.n !== undefined ? { n: args.n } : {}),
          ...(args.size !== undefined ? { size: args.size } : {}),
        },
        {
          ...(options.outputDir !== undefined
            ? { outputDir: options.outputDir }
            : context.workDir !== undefined
              ? { outputDir: context.workDir }
              : {}),
          signal: context.signal,
          fileNamePrefix: 'image-gen',
        },
      );
      const blocks: ContentBlock[] = [
        textBlock(describe(result, args.prompt, context.language === 'zh')),
      ];
      for (const image of result.images) {
        const block: ImageBlock = {
          type: 'image',
          path: image.path,
          mimeType: image.mimeType,
          alt: image.revisedPrompt ?? args.prompt.trim(),
        };
        if (options.inlineImages === true)
          block.data = (await readFile(image.path)).toString('base64');
        blocks.push(block);
      }
      return {
        content: blocks,
        metadata: {
          model: result.model,
          ...(result.size !== undefined ? { size: result.size } : {}),
          images: result.images,
          failures: result.failures,
        },
      };
    },
  });
}

function describe(result: ImageGenerationResult, prompt: string, chinese: boolean): string {
  const count = result.images.length;
  const lines = [
    chinese
      ? `已用 ${result.model} 生成 ${count} 张图片${result.size !== undefined ? `（${result.size}）` : ''}：`
      : `Generated ${count} image${count === 1 ? '' : 's'} with ${result.model}${result.size !== undefined ? ` (${result.size})` : ''}:`,
  ];
  result.images.forEach((image, index) => {
    lines.push(`${index + 1}. ${image.path} (${details(image)})`);
    if (image.revisedPrompt !== undefined && image.revisedPrompt !== prompt.trim()) {
      lines.push(`   ${chinese ? '模型改写后的提示词' : 'Revised prompt'}: ${image.revisedPrompt}`);
    }
  });
  for (const failure of result.failures) {
    lines.push(
      chinese
        ? `注意：第 ${failure.index + 1} 张图片未能保存（${failure.message}）。`
        : `Note: image ${failure.index + 1} could not be saved (${failure.message}).`,
    );
  }
  return lines.join('\n');
}

function details(image: GeneratedImage): string {
  const size = image.width !== undefined ? `${image.width}×${image.height}, ` : '';
  const kib = image.bytes >= 1024 ? `${Math.round(image.bytes / 1024)} KiB` : `${image.bytes} B`;
  return `${size}${image.mimeType}, ${kib}`;
}

/**
 * Registry factory for `image_gen` (`registerTool(imageGenToolFactory)`, then
 * `getTool('image_gen', { model: 'qwen-image-plus', baseUrl: '…' })`).
 */
export const imageGenToolFactory: ToolFactory<ImageGenToolOptions> = {
  name: 'image_gen',
  create: (config) => createImageGenTool(config),
};
