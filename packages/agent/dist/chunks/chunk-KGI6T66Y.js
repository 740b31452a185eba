import { createRequire as __agentauthCreateRequire } from 'node:module';
const require = __agentauthCreateRequire(import.meta.url);
import {
  __commonJS,
  __require,
  __toESM
} from "./chunk-ER33LZII.js";

// ../../node_modules/commander/lib/error.js
var require_error = __commonJS({
  "../../node_modules/commander/lib/error.js"(exports) {
    var CommanderError2 = class extends Error {
      /**
       * Constructs the CommanderError class
       * @param {number} exitCode suggested exit code which could be used with process.exit
       * @param {string} code an id string representing the error
       * @param {string} message human-readable description of the error
       */
      constructor(exitCode, code, message) {
        super(message);
        Error.captureStackTrace(this, this.constructor);
        this.name = this.constructor.name;
        this.code = code;
        this.exitCode = exitCode;
        this.nestedError = void 0;
      }
    };
    var InvalidArgumentError2 = class extends CommanderError2 {
      /**
       * Constructs the InvalidArgumentError class
       * @param {string} [message] explanation of why argument is invalid
       */
      constructor(message) {
        super(1, "commander.invalidArgument", message);
        Error.captureStackTrace(this, this.constructor);
        this.name = this.constructor.name;
      }
    };
    exports.CommanderError = CommanderError2;
    exports.InvalidArgumentError = InvalidArgumentError2;
  }
});

// ../../node_modules/commander/lib/argument.js
var require_argument = __commonJS({
  "../../node_modules/commander/lib/argument.js"(exports) {
    var { InvalidArgumentError: InvalidArgumentError2 } = require_error();
    var Argument2 = class {
      /**
       * Initialize a new command argument with the given name and description.
       * The default is that the argument is required, and you can explicitly
       * indicate this with <> around the name. Put [] around the name for an optional argument.
       *
       * @param {string} name
       * @param {string} [description]
       */
      constructor(name, description) {
        this.description = description || "";
        this.variadic = false;
        this.parseArg = void 0;
        this.defaultValue = void 0;
        this.defaultValueDescription = void 0;
        this.argChoices = void 0;
        switch (name[0]) {
          case "<":
            this.required = true;
            this._name = name.slice(1, -1);
            break;
          case "[":
            this.required = false;
            this._name = name.slice(1, -1);
            break;
          default:
            this.required = true;
            this._name = name;
            break;
        }
        if (this._name.endsWith("...")) {
          this.variadic = true;
          this._name = this._name.slice(0, -3);
        }
      }
      /**
       * Return argument name.
       *
       * @return {string}
       */
      name() {
        return this._name;
      }
      /**
       * @package
       */
      _collectValue(value, previous) {
        if (previous === this.defaultValue || !Array.isArray(previous)) {
          return [value];
        }
        previous.push(value);
        return previous;
      }
      /**
       * Set the default value, and optionally supply the description to be displayed in the help.
       *
       * @param {*} value
       * @param {string} [description]
       * @return {Argument}
       */
      default(value, description) {
        this.defaultValue = value;
        this.defaultValueDescription = description;
        return this;
      }
      /**
       * Set the custom handler for processing CLI command arguments into argument values.
       *
       * @param {Function} [fn]
       * @return {Argument}
       */
      argParser(fn) {
        this.parseArg = fn;
        return this;
      }
      /**
       * Only allow argument value to be one of choices.
       *
       * @param {string[]} values
       * @return {Argument}
       */
      choices(values) {
        this.argChoices = values.slice();
        this.parseArg = (arg, previous) => {
          if (!this.argChoices.includes(arg)) {
            throw new InvalidArgumentError2(
              `Allowed choices are ${this.argChoices.join(", ")}.`
            );
          }
          if (this.variadic) {
            return this._collectValue(arg, previous);
          }
          return arg;
        };
        return this;
      }
      /**
       * Make argument required.
       *
       * @returns {Argument}
       */
      argRequired() {
        this.required = true;
        return this;
      }
      /**
       * Make argument optional.
       *
       * @returns {Argument}
       */
      argOptional() {
        this.required = false;
        return this;
      }
    };
    function humanReadableArgName(arg) {
      const nameOutput = arg.name() + (arg.variadic === true ? "..." : "");
      return arg.required ? "<" + nameOutput + ">" : "[" + nameOutput + "]";
    }
    exports.Argument = Argument2;
    exports.humanReadableArgName = humanReadableArgName;
  }
});

// ../../node_modules/commander/lib/help.js
var require_help = __commonJS({
  "../../node_modules/commander/lib/help.js"(exports) {
    var { humanReadableArgName } = require_argument();
    var Help2 = class {
      constructor() {
        this.helpWidth = void 0;
        this.minWidthToWrap = 40;
        this.sortSubcommands = false;
        this.sortOptions = false;
        this.showGlobalOptions = false;
      }
      /**
       * prepareContext is called by Commander after applying overrides from `Command.configureHelp()`
       * and just before calling `formatHelp()`.
       *
       * Commander just uses the helpWidth and the rest is provided for optional use by more complex subclasses.
       *
       * @param {{ error?: boolean, helpWidth?: number, outputHasColors?: boolean }} contextOptions
       */
      prepareContext(contextOptions) {
        this.helpWidth = this.helpWidth ?? contextOptions.helpWidth ?? 80;
      }
      /**
       * Get an array of the visible subcommands. Includes a placeholder for the implicit help command, if there is one.
       *
       * @param {Command} cmd
       * @returns {Command[]}
       */
      visibleCommands(cmd) {
        const visibleCommands = cmd.commands.filter((cmd2) => !cmd2._hidden);
        const helpCommand = cmd._getHelpCommand();
        if (helpCommand && !helpCommand._hidden) {
          visibleCommands.push(helpCommand);
        }
        if (this.sortSubcommands) {
          visibleCommands.sort((a, b) => {
            return a.name().localeCompare(b.name());
          });
        }
        return visibleCommands;
      }
      /**
       * Compare options for sort.
       *
       * @param {Option} a
       * @param {Option} b
       * @returns {number}
       */
      compareOptions(a, b) {
        const getSortKey = (option) => {
          return option.short ? option.short.replace(/^-/, "") : option.long.replace(/^--/, "");
        };
        return getSortKey(a).localeCompare(getSortKey(b));
      }
      /**
       * Get an array of the visible options. Includes a placeholder for the implicit help option, if there is one.
       *
       * @param {Command} cmd
       * @returns {Option[]}
       */
      visibleOptions(cmd) {
        const visibleOptions = cmd.options.filter((option) => !option.hidden);
        const helpOption = cmd._getHelpOption();
        if (helpOption && !helpOption.hidden) {
          const removeShort = helpOption.short && cmd._findOption(helpOption.short);
          const removeLong = helpOption.long && cmd._findOption(helpOption.long);
          if (!removeShort && !removeLong) {
            visibleOptions.push(helpOption);
          } else if (helpOption.long && !removeLong) {
            visibleOptions.push(
              cmd.createOption(helpOption.long, helpOption.description)
            );
          } else if (helpOption.short && !removeShort) {
            visibleOptions.push(
              cmd.createOption(helpOption.short, helpOption.description)
            );
          }
        }
        if (this.sortOptions) {
          visibleOptions.sort(this.compareOptions);
        }
        return visibleOptions;
      }
      /**
       * Get an array of the visible global options. (Not including help.)
       *
       * @param {Command} cmd
       * @returns {Option[]}
       */
      visibleGlobalOptions(cmd) {
        if (!this.showGlobalOptions) return [];
        const globalOptions = [];
        for (let ancestorCmd = cmd.parent; ancestorCmd; ancestorCmd = ancestorCmd.parent) {
          const visibleOptions = ancestorCmd.options.filter(
            (option) => !option.hidden
          );
          globalOptions.push(...visibleOptions);
        }
        if (this.sortOptions) {
          globalOptions.sort(this.compareOptions);
        }
        return globalOptions;
      }
      /**
       * Get an array of the arguments if any have a description.
       *
       * @param {Command} cmd
       * @returns {Argument[]}
       */
      visibleArguments(cmd) {
        if (cmd._argsDescription) {
          cmd.registeredArguments.forEach((argument) => {
            argument.description = argument.description || cmd._argsDescription[argument.name()] || "";
          });
        }
        if (cmd.registeredArguments.find((argument) => argument.description)) {
          return cmd.registeredArguments;
        }
        return [];
      }
      /**
       * Get the command term to show in the list of subcommands.
       *
       * @param {Command} cmd
       * @returns {string}
       */
      subcommandTerm(cmd) {
        const args = cmd.registeredArguments.map((arg) => humanReadableArgName(arg)).join(" ");
        return cmd._name + (cmd._aliases[0] ? "|" + cmd._aliases[0] : "") + (cmd.options.length ? " [options]" : "") + // simplistic check for non-help option
        (args ? " " + args : "");
      }
      /**
       * Get the option term to show in the list of options.
       *
       * @param {Option} option
       * @returns {string}
       */
      optionTerm(option) {
        return option.flags;
      }
      /**
       * Get the argument term to show in the list of arguments.
       *
       * @param {Argument} argument
       * @returns {string}
       */
      argumentTerm(argument) {
        return argument.name();
      }
      /**
       * Get the longest command term length.
       *
       * @param {Command} cmd
       * @param {Help} helper
       * @returns {number}
       */
      longestSubcommandTermLength(cmd, helper) {
        return helper.visibleCommands(cmd).reduce((max, command) => {
          return Math.max(
            max,
            this.displayWidth(
              helper.styleSubcommandTerm(helper.subcommandTerm(command))
            )
          );
        }, 0);
      }
      /**
       * Get the longest option term length.
       *
       * @param {Command} cmd
       * @param {Help} helper
       * @returns {number}
       */
      longestOptionTermLength(cmd, helper) {
        return helper.visibleOptions(cmd).reduce((max, option) => {
          return Math.max(
            max,
            this.displayWidth(helper.styleOptionTerm(helper.optionTerm(option)))
          );
        }, 0);
      }
      /**
       * Get the longest global option term length.
       *
       * @param {Command} cmd
       * @param {Help} helper
       * @returns {number}
       */
      longestGlobalOptionTermLength(cmd, helper) {
        return helper.visibleGlobalOptions(cmd).reduce((max, option) => {
          return Math.max(
            max,
            this.displayWidth(helper.styleOptionTerm(helper.optionTerm(option)))
          );
        }, 0);
      }
      /**
       * Get the longest argument term length.
       *
       * @param {Command} cmd
       * @param {Help} helper
       * @returns {number}
       */
      longestArgumentTermLength(cmd, helper) {
        return helper.visibleArguments(cmd).reduce((max, argument) => {
          return Math.max(
            max,
            this.displayWidth(
              helper.styleArgumentTerm(helper.argumentTerm(argument))
            )
          );
        }, 0);
      }
      /**
       * Get the command usage to be displayed at the top of the built-in help.
       *
       * @param {Command} cmd
       * @returns {string}
       */
      commandUsage(cmd) {
        let cmdName = cmd._name;
        if (cmd._aliases[0]) {
          cmdName = cmdName + "|" + cmd._aliases[0];
        }
        let ancestorCmdNames = "";
        for (let ancestorCmd = cmd.parent; ancestorCmd; ancestorCmd = ancestorCmd.parent) {
          ancestorCmdNames = ancestorCmd.name() + " " + ancestorCmdNames;
        }
        return ancestorCmdNames + cmdName + " " + cmd.usage();
      }
      /**
       * Get the description for the command.
       *
       * @param {Command} cmd
       * @returns {string}
       */
      commandDescription(cmd) {
        return cmd.description();
      }
      /**
       * Get the subcommand summary to show in the list of subcommands.
       * (Fallback to description for backwards compatibility.)
       *
       * @param {Command} cmd
       * @returns {string}
       */
      subcommandDescription(cmd) {
        return cmd.summary() || cmd.description();
      }
      /**
       * Get the option description to show in the list of options.
       *
       * @param {Option} option
       * @return {string}
       */
      optionDescription(option) {
        const extraInfo = [];
        if (option.argChoices) {
          extraInfo.push(
            // use stringify to match the display of the default value
            `choices: ${option.argChoices.map((choice) => JSON.stringify(choice)).join(", ")}`
          );
        }
        if (option.defaultValue !== void 0) {
          const showDefault = option.required || option.optional || option.isBoolean() && typeof option.defaultValue === "boolean";
          if (showDefault) {
            extraInfo.push(
              `default: ${option.defaultValueDescription || JSON.stringify(option.defaultValue)}`
            );
          }
        }
        if (option.presetArg !== void 0 && option.optional) {
          extraInfo.push(`preset: ${JSON.stringify(option.presetArg)}`);
        }
        if (option.envVar !== void 0) {
          extraInfo.push(`env: ${option.envVar}`);
        }
        if (extraInfo.length > 0) {
          const extraDescription = `(${extraInfo.join(", ")})`;
          if (option.description) {
            return `${option.description} ${extraDescription}`;
          }
          return extraDescription;
        }
        return option.description;
      }
      /**
       * Get the argument description to show in the list of arguments.
       *
       * @param {Argument} argument
       * @return {string}
       */
      argumentDescription(argument) {
        const extraInfo = [];
        if (argument.argChoices) {
          extraInfo.push(
            // use stringify to match the display of the default value
            `choices: ${argument.argChoices.map((choice) => JSON.stringify(choice)).join(", ")}`
          );
        }
        if (argument.defaultValue !== void 0) {
          extraInfo.push(
            `default: ${argument.defaultValueDescription || JSON.stringify(argument.defaultValue)}`
          );
        }
        if (extraInfo.length > 0) {
          const extraDescription = `(${extraInfo.join(", ")})`;
          if (argument.description) {
            return `${argument.description} ${extraDescription}`;
          }
          return extraDescription;
        }
        return argument.description;
      }
      /**
       * Format a list of items, given a heading and an array of formatted items.
       *
       * @param {string} heading
       * @param {string[]} items
       * @param {Help} helper
       * @returns string[]
       */
      formatItemList(heading, items, helper) {
        if (items.length === 0) return [];
        return [helper.styleTitle(heading), ...items, ""];
      }
      /**
       * Group items by their help group heading.
       *
       * @param {Command[] | Option[]} unsortedItems
       * @param {Command[] | Option[]} visibleItems
       * @param {Function} getGroup
       * @returns {Map<string, Command[] | Option[]>}
       */
      groupItems(unsortedItems, visibleItems, getGroup) {
        const result = /* @__PURE__ */ new Map();
        unsortedItems.forEach((item) => {
          const group = getGroup(item);
          if (!result.has(group)) result.set(group, []);
        });
        visibleItems.forEach((item) => {
          const group = getGroup(item);
          if (!result.has(group)) {
            result.set(group, []);
          }
          result.get(group).push(item);
        });
        return result;
      }
      /**
       * Generate the built-in help text.
       *
       * @param {Command} cmd
       * @param {Help} helper
       * @returns {string}
       */
      formatHelp(cmd, helper) {
        const termWidth = helper.padWidth(cmd, helper);
        const helpWidth = helper.helpWidth ?? 80;
        function callFormatItem(term, description) {
          return helper.formatItem(term, termWidth, description, helper);
        }
        let output = [
          `${helper.styleTitle("Usage:")} ${helper.styleUsage(helper.commandUsage(cmd))}`,
          ""
        ];
        const commandDescription = helper.commandDescription(cmd);
        if (commandDescription.length > 0) {
          output = output.concat([
            helper.boxWrap(
              helper.styleCommandDescription(commandDescription),
              helpWidth
            ),
            ""
          ]);
        }
        const argumentList = helper.visibleArguments(cmd).map((argument) => {
          return callFormatItem(
            helper.styleArgumentTerm(helper.argumentTerm(argument)),
            helper.styleArgumentDescription(helper.argumentDescription(argument))
          );
        });
        output = output.concat(
          this.formatItemList("Arguments:", argumentList, helper)
        );
        const optionGroups = this.groupItems(
          cmd.options,
          helper.visibleOptions(cmd),
          (option) => option.helpGroupHeading ?? "Options:"
        );
        optionGroups.forEach((options, group) => {
          const optionList = options.map((option) => {
            return callFormatItem(
              helper.styleOptionTerm(helper.optionTerm(option)),
              helper.styleOptionDescription(helper.optionDescription(option))
            );
          });
          output = output.concat(this.formatItemList(group, optionList, helper));
        });
        if (helper.showGlobalOptions) {
          const globalOptionList = helper.visibleGlobalOptions(cmd).map((option) => {
            return callFormatItem(
              helper.styleOptionTerm(helper.optionTerm(option)),
              helper.styleOptionDescription(helper.optionDescription(option))
            );
          });
          output = output.concat(
            this.formatItemList("Global Options:", globalOptionList, helper)
          );
        }
        const commandGroups = this.groupItems(
          cmd.commands,
          helper.visibleCommands(cmd),
          (sub) => sub.helpGroup() || "Commands:"
        );
        commandGroups.forEach((commands, group) => {
          const commandList = commands.map((sub) => {
            return callFormatItem(
              helper.styleSubcommandTerm(helper.subcommandTerm(sub)),
              helper.styleSubcommandDescription(helper.subcommandDescription(sub))
            );
          });
          output = output.concat(this.formatItemList(group, commandList, helper));
        });
        return output.join("\n");
      }
      /**
       * Return display width of string, ignoring ANSI escape sequences. Used in padding and wrapping calculations.
       *
       * @param {string} str
       * @returns {number}
       */
      displayWidth(str) {
        return stripColor(str).length;
      }
      /**
       * Style the title for displaying in the help. Called with 'Usage:', 'Options:', etc.
       *
       * @param {string} str
       * @returns {string}
       */
      styleTitle(str) {
        return str;
      }
      styleUsage(str) {
        return str.split(" ").map((word) => {
          if (word === "[options]") return this.styleOptionText(word);
          if (word === "[command]") return this.styleSubcommandText(word);
          if (word[0] === "[" || word[0] === "<")
            return this.styleArgumentText(word);
          return this.styleCommandText(word);
        }).join(" ");
      }
      styleCommandDescription(str) {
        return this.styleDescriptionText(str);
      }
      styleOptionDescription(str) {
        return this.styleDescriptionText(str);
      }
      styleSubcommandDescription(str) {
        return this.styleDescriptionText(str);
      }
      styleArgumentDescription(str) {
        return this.styleDescriptionText(str);
      }
      styleDescriptionText(str) {
        return str;
      }
      styleOptionTerm(str) {
        return this.styleOptionText(str);
      }
      styleSubcommandTerm(str) {
        return str.split(" ").map((word) => {
          if (word === "[options]") return this.styleOptionText(word);
          if (word[0] === "[" || word[0] === "<")
            return this.styleArgumentText(word);
          return this.styleSubcommandText(word);
        }).join(" ");
      }
      styleArgumentTerm(str) {
        return this.styleArgumentText(str);
      }
      styleOptionText(str) {
        return str;
      }
      styleArgumentText(str) {
        return str;
      }
      styleSubcommandText(str) {
        return str;
      }
      styleCommandText(str) {
        return str;
      }
      /**
       * Calculate the pad width from the maximum term length.
       *
       * @param {Command} cmd
       * @param {Help} helper
       * @returns {number}
       */
      padWidth(cmd, helper) {
        return Math.max(
          helper.longestOptionTermLength(cmd, helper),
          helper.longestGlobalOptionTermLength(cmd, helper),
          helper.longestSubcommandTermLength(cmd, helper),
          helper.longestArgumentTermLength(cmd, helper)
        );
      }
      /**
       * Detect manually wrapped and indented strings by checking for line break followed by whitespace.
       *
       * @param {string} str
       * @returns {boolean}
       */
      preformatted(str) {
        return /\n[^\S\r\n]/.test(str);
      }
      /**
       * Format the "item", which consists of a term and description. Pad the term and wrap the description, indenting the following lines.
       *
       * So "TTT", 5, "DDD DDDD DD DDD" might be formatted for this.helpWidth=17 like so:
       *   TTT  DDD DDDD
       *        DD DDD
       *
       * @param {string} term
       * @param {number} termWidth
       * @param {string} description
       * @param {Help} helper
       * @returns {string}
       */
      formatItem(term, termWidth, description, helper) {
        const itemIndent = 2;
        const itemIndentStr = " ".repeat(itemIndent);
        if (!description) return itemIndentStr + term;
        const paddedTerm = term.padEnd(
          termWidth + term.length - helper.displayWidth(term)
        );
        const spacerWidth = 2;
        const helpWidth = this.helpWidth ?? 80;
        const remainingWidth = helpWidth - termWidth - spacerWidth - itemIndent;
        let formattedDescription;
        if (remainingWidth < this.minWidthToWrap || helper.preformatted(description)) {
          formattedDescription = description;
        } else {
          const wrappedDescription = helper.boxWrap(description, remainingWidth);
          formattedDescription = wrappedDescription.replace(
            /\n/g,
            "\n" + " ".repeat(termWidth + spacerWidth)
          );
        }
        return itemIndentStr + paddedTerm + " ".repeat(spacerWidth) + formattedDescription.replace(/\n/g, `
${itemIndentStr}`);
      }
      /**
       * Wrap a string at whitespace, preserving existing line breaks.
       * Wrapping is skipped if the width is less than `minWidthToWrap`.
       *
       * @param {string} str
       * @param {number} width
       * @returns {string}
       */
      boxWrap(str, width) {
        if (width < this.minWidthToWrap) return str;
        const rawLines = str.split(/\r\n|\n/);
        const chunkPattern = /[\s]*[^\s]+/g;
        const wrappedLines = [];
        rawLines.forEach((line) => {
          const chunks = line.match(chunkPattern);
          if (chunks === null) {
            wrappedLines.push("");
            return;
          }
          let sumChunks = [chunks.shift()];
          let sumWidth = this.displayWidth(sumChunks[0]);
          chunks.forEach((chunk) => {
            const visibleWidth = this.displayWidth(chunk);
            if (sumWidth + visibleWidth <= width) {
              sumChunks.push(chunk);
              sumWidth += visibleWidth;
              return;
            }
            wrappedLines.push(sumChunks.join(""));
            const nextChunk = chunk.trimStart();
            sumChunks = [nextChunk];
            sumWidth = this.displayWidth(nextChunk);
          });
          wrappedLines.push(sumChunks.join(""));
        });
        return wrappedLines.join("\n");
      }
    };
    function stripColor(str) {
      const sgrPattern = /\x1b\[\d*(;\d*)*m/g;
      return str.replace(sgrPattern, "");
    }
    exports.Help = Help2;
    exports.stripColor = stripColor;
  }
});

// ../../node_modules/commander/lib/option.js
var require_option = __commonJS({
  "../../node_modules/commander/lib/option.js"(exports) {
    var { InvalidArgumentError: InvalidArgumentError2 } = require_error();
    var Option2 = class {
      /**
       * Initialize a new `Option` with the given `flags` and `description`.
       *
       * @param {string} flags
       * @param {string} [description]
       */
      constructor(flags, description) {
        this.flags = flags;
        this.description = description || "";
        this.required = flags.includes("<");
        this.optional = flags.includes("[");
        this.variadic = /\w\.\.\.[>\]]$/.test(flags);
        this.mandatory = false;
        const optionFlags = splitOptionFlags(flags);
        this.short = optionFlags.shortFlag;
        this.long = optionFlags.longFlag;
        this.negate = false;
        if (this.long) {
          this.negate = this.long.startsWith("--no-");
        }
        this.defaultValue = void 0;
        this.defaultValueDescription = void 0;
        this.presetArg = void 0;
        this.envVar = void 0;
        this.parseArg = void 0;
        this.hidden = false;
        this.argChoices = void 0;
        this.conflictsWith = [];
        this.implied = void 0;
        this.helpGroupHeading = void 0;
      }
      /**
       * Set the default value, and optionally supply the description to be displayed in the help.
       *
       * @param {*} value
       * @param {string} [description]
       * @return {Option}
       */
      default(value, description) {
        this.defaultValue = value;
        this.defaultValueDescription = description;
        return this;
      }
      /**
       * Preset to use when option used without option-argument, especially optional but also boolean and negated.
       * The custom processing (parseArg) is called.
       *
       * @example
       * new Option('--color').default('GREYSCALE').preset('RGB');
       * new Option('--donate [amount]').preset('20').argParser(parseFloat);
       *
       * @param {*} arg
       * @return {Option}
       */
      preset(arg) {
        this.presetArg = arg;
        return this;
      }
      /**
       * Add option name(s) that conflict with this option.
       * An error will be displayed if conflicting options are found during parsing.
       *
       * @example
       * new Option('--rgb').conflicts('cmyk');
       * new Option('--js').conflicts(['ts', 'jsx']);
       *
       * @param {(string | string[])} names
       * @return {Option}
       */
      conflicts(names) {
        this.conflictsWith = this.conflictsWith.concat(names);
        return this;
      }
      /**
       * Specify implied option values for when this option is set and the implied options are not.
       *
       * The custom processing (parseArg) is not called on the implied values.
       *
       * @example
       * program
       *   .addOption(new Option('--log', 'write logging information to file'))
       *   .addOption(new Option('--trace', 'log extra details').implies({ log: 'trace.txt' }));
       *
       * @param {object} impliedOptionValues
       * @return {Option}
       */
      implies(impliedOptionValues) {
        let newImplied = impliedOptionValues;
        if (typeof impliedOptionValues === "string") {
          newImplied = { [impliedOptionValues]: true };
        }
        this.implied = Object.assign(this.implied || {}, newImplied);
        return this;
      }
      /**
       * Set environment variable to check for option value.
       *
       * An environment variable is only used if when processed the current option value is
       * undefined, or the source of the current value is 'default' or 'config' or 'env'.
       *
       * @param {string} name
       * @return {Option}
       */
      env(name) {
        this.envVar = name;
        return this;
      }
      /**
       * Set the custom handler for processing CLI option arguments into option values.
       *
       * @param {Function} [fn]
       * @return {Option}
       */
      argParser(fn) {
        this.parseArg = fn;
        return this;
      }
      /**
       * Whether the option is mandatory and must have a value after parsing.
       *
       * @param {boolean} [mandatory=true]
       * @return {Option}
       */
      makeOptionMandatory(mandatory = true) {
        this.mandatory = !!mandatory;
        return this;
      }
      /**
       * Hide option in help.
       *
       * @param {boolean} [hide=true]
       * @return {Option}
       */
      hideHelp(hide = true) {
        this.hidden = !!hide;
        return this;
      }
      /**
       * @package
       */
      _collectValue(value, previous) {
        if (previous === this.defaultValue || !Array.isArray(previous)) {
          return [value];
        }
        previous.push(value);
        return previous;
      }
      /**
       * Only allow option value to be one of choices.
       *
       * @param {string[]} values
       * @return {Option}
       */
      choices(values) {
        this.argChoices = values.slice();
        this.parseArg = (arg, previous) => {
          if (!this.argChoices.includes(arg)) {
            throw new InvalidArgumentError2(
              `Allowed choices are ${this.argChoices.join(", ")}.`
            );
          }
          if (this.variadic) {
            return this._collectValue(arg, previous);
          }
          return arg;
        };
        return this;
      }
      /**
       * Return option name.
       *
       * @return {string}
       */
      name() {
        if (this.long) {
          return this.long.replace(/^--/, "");
        }
        return this.short.replace(/^-/, "");
      }
      /**
       * Return option name, in a camelcase format that can be used
       * as an object attribute key.
       *
       * @return {string}
       */
      attributeName() {
        if (this.negate) {
          return camelcase(this.name().replace(/^no-/, ""));
        }
        return camelcase(this.name());
      }
      /**
       * Set the help group heading.
       *
       * @param {string} heading
       * @return {Option}
       */
      helpGroup(heading) {
        this.helpGroupHeading = heading;
        return this;
      }
      /**
       * Check if `arg` matches the short or long flag.
       *
       * @param {string} arg
       * @return {boolean}
       * @package
       */
      is(arg) {
        return this.short === arg || this.long === arg;
      }
      /**
       * Return whether a boolean option.
       *
       * Options are one of boolean, negated, required argument, or optional argument.
       *
       * @return {boolean}
       * @package
       */
      isBoolean() {
        return !this.required && !this.optional && !this.negate;
      }
    };
    var DualOptions = class {
      /**
       * @param {Option[]} options
       */
      constructor(options) {
        this.positiveOptions = /* @__PURE__ */ new Map();
        this.negativeOptions = /* @__PURE__ */ new Map();
        this.dualOptions = /* @__PURE__ */ new Set();
        options.forEach((option) => {
          if (option.negate) {
            this.negativeOptions.set(option.attributeName(), option);
          } else {
            this.positiveOptions.set(option.attributeName(), option);
          }
        });
        this.negativeOptions.forEach((value, key) => {
          if (this.positiveOptions.has(key)) {
            this.dualOptions.add(key);
          }
        });
      }
      /**
       * Did the value come from the option, and not from possible matching dual option?
       *
       * @param {*} value
       * @param {Option} option
       * @returns {boolean}
       */
      valueFromOption(value, option) {
        const optionKey = option.attributeName();
        if (!this.dualOptions.has(optionKey)) return true;
        const preset = this.negativeOptions.get(optionKey).presetArg;
        const negativeValue = preset !== void 0 ? preset : false;
        return option.negate === (negativeValue === value);
      }
    };
    function camelcase(str) {
      return str.split("-").reduce((str2, word) => {
        return str2 + word[0].toUpperCase() + word.slice(1);
      });
    }
    function splitOptionFlags(flags) {
      let shortFlag;
      let longFlag;
      const shortFlagExp = /^-[^-]$/;
      const longFlagExp = /^--[^-]/;
      const flagParts = flags.split(/[ |,]+/).concat("guard");
      if (shortFlagExp.test(flagParts[0])) shortFlag = flagParts.shift();
      if (longFlagExp.test(flagParts[0])) longFlag = flagParts.shift();
      if (!shortFlag && shortFlagExp.test(flagParts[0]))
        shortFlag = flagParts.shift();
      if (!shortFlag && longFlagExp.test(flagParts[0])) {
        shortFlag = longFlag;
        longFlag = flagParts.shift();
      }
      if (flagParts[0].startsWith("-")) {
        const unsupportedFlag = flagParts[0];
        const baseError = `option creation failed due to '${unsupportedFlag}' in option flags '${flags}'`;
        if (/^-[^-][^-]/.test(unsupportedFlag))
          throw new Error(
            `${baseError}
- a short flag is a single dash and a single character
  - either use a single dash and a single character (for a short flag)
  - or use a double dash for a long option (and can have two, like '--ws, --workspace')`
          );
        if (shortFlagExp.test(unsupportedFlag))
          throw new Error(`${baseError}
- too many short flags`);
        if (longFlagExp.test(unsupportedFlag))
          throw new Error(`${baseError}
- too many long flags`);
        throw new Error(`${baseError}
- unrecognised flag format`);
      }
      if (shortFlag === void 0 && longFlag === void 0)
        throw new Error(
          `option creation failed due to no flags found in '${flags}'.`
        );
      return { shortFlag, longFlag };
    }
    exports.Option = Option2;
    exports.DualOptions = DualOptions;
  }
});

// ../../node_modules/commander/lib/suggestSimilar.js
var require_suggestSimilar = __commonJS({
  "../../node_modules/commander/lib/suggestSimilar.js"(exports) {
    var maxDistance = 3;
    function editDistance(a, b) {
      if (Math.abs(a.length - b.length) > maxDistance)
        return Math.max(a.length, b.length);
      const d = [];
      for (let i = 0; i <= a.length; i++) {
        d[i] = [i];
      }
      for (let j = 0; j <= b.length; j++) {
        d[0][j] = j;
      }
      for (let j = 1; j <= b.length; j++) {
        for (let i = 1; i <= a.length; i++) {
          let cost = 1;
          if (a[i - 1] === b[j - 1]) {
            cost = 0;
          } else {
            cost = 1;
          }
          d[i][j] = Math.min(
            d[i - 1][j] + 1,
            // deletion
            d[i][j - 1] + 1,
            // insertion
            d[i - 1][j - 1] + cost
            // substitution
          );
          if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
            d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
          }
        }
      }
      return d[a.length][b.length];
    }
    function suggestSimilar(word, candidates) {
      if (!candidates || candidates.length === 0) return "";
      candidates = Array.from(new Set(candidates));
      const searchingOptions = word.startsWith("--");
      if (searchingOptions) {
        word = word.slice(2);
        candidates = candidates.map((candidate) => candidate.slice(2));
      }
      let similar = [];
      let bestDistance = maxDistance;
      const minSimilarity = 0.4;
      candidates.forEach((candidate) => {
        if (candidate.length <= 1) return;
        const distance = editDistance(word, candidate);
        const length = Math.max(word.length, candidate.length);
        const similarity = (length - distance) / length;
        if (similarity > minSimilarity) {
          if (distance < bestDistance) {
            bestDistance = distance;
            similar = [candidate];
          } else if (distance === bestDistance) {
            similar.push(candidate);
          }
        }
      });
      similar.sort((a, b) => a.localeCompare(b));
      if (searchingOptions) {
        similar = similar.map((candidate) => `--${candidate}`);
      }
      if (similar.length > 1) {
        return `
(Did you mean one of ${similar.join(", ")}?)`;
      }
      if (similar.length === 1) {
        return `
(Did you mean ${similar[0]}?)`;
      }
      return "";
    }
    exports.suggestSimilar = suggestSimilar;
  }
});

// ../../node_modules/commander/lib/command.js
var require_command = __commonJS({
  "../../node_modules/commander/lib/command.js"(exports) {
    var EventEmitter = __require("node:events").EventEmitter;
    var childProcess = __require("node:child_process");
    var path = __require("node:path");
    var fs = __require("node:fs");
    var process2 = __require("node:process");
    var { Argument: Argument2, humanReadableArgName } = require_argument();
    var { CommanderError: CommanderError2 } = require_error();
    var { Help: Help2, stripColor } = require_help();
    var { Option: Option2, DualOptions } = require_option();
    var { suggestSimilar } = require_suggestSimilar();
    var Command2 = class _Command extends EventEmitter {
      /**
       * Initialize a new `Command`.
       *
       * @param {string} [name]
       */
      constructor(name) {
        super();
        this.commands = [];
        this.options = [];
        this.parent = null;
        this._allowUnknownOption = false;
        this._allowExcessArguments = false;
        this.registeredArguments = [];
        this._args = this.registeredArguments;
        this.args = [];
        this.rawArgs = [];
        this.processedArgs = [];
        this._scriptPath = null;
        this._name = name || "";
        this._optionValues = {};
        this._optionValueSources = {};
        this._storeOptionsAsProperties = false;
        this._actionHandler = null;
        this._executableHandler = false;
        this._executableFile = null;
        this._executableDir = null;
        this._defaultCommandName = null;
        this._exitCallback = null;
        this._aliases = [];
        this._combineFlagAndOptionalValue = true;
        this._description = "";
        this._summary = "";
        this._argsDescription = void 0;
        this._enablePositionalOptions = false;
        this._passThroughOptions = false;
        this._lifeCycleHooks = {};
        this._showHelpAfterError = false;
        this._showSuggestionAfterError = true;
        this._savedState = null;
        this._outputConfiguration = {
          writeOut: (str) => process2.stdout.write(str),
          writeErr: (str) => process2.stderr.write(str),
          outputError: (str, write) => write(str),
          getOutHelpWidth: () => process2.stdout.isTTY ? process2.stdout.columns : void 0,
          getErrHelpWidth: () => process2.stderr.isTTY ? process2.stderr.columns : void 0,
          getOutHasColors: () => useColor() ?? (process2.stdout.isTTY && process2.stdout.hasColors?.()),
          getErrHasColors: () => useColor() ?? (process2.stderr.isTTY && process2.stderr.hasColors?.()),
          stripColor: (str) => stripColor(str)
        };
        this._hidden = false;
        this._helpOption = void 0;
        this._addImplicitHelpCommand = void 0;
        this._helpCommand = void 0;
        this._helpConfiguration = {};
        this._helpGroupHeading = void 0;
        this._defaultCommandGroup = void 0;
        this._defaultOptionGroup = void 0;
      }
      /**
       * Copy settings that are useful to have in common across root command and subcommands.
       *
       * (Used internally when adding a command using `.command()` so subcommands inherit parent settings.)
       *
       * @param {Command} sourceCommand
       * @return {Command} `this` command for chaining
       */
      copyInheritedSettings(sourceCommand) {
        this._outputConfiguration = sourceCommand._outputConfiguration;
        this._helpOption = sourceCommand._helpOption;
        this._helpCommand = sourceCommand._helpCommand;
        this._helpConfiguration = sourceCommand._helpConfiguration;
        this._exitCallback = sourceCommand._exitCallback;
        this._storeOptionsAsProperties = sourceCommand._storeOptionsAsProperties;
        this._combineFlagAndOptionalValue = sourceCommand._combineFlagAndOptionalValue;
        this._allowExcessArguments = sourceCommand._allowExcessArguments;
        this._enablePositionalOptions = sourceCommand._enablePositionalOptions;
        this._showHelpAfterError = sourceCommand._showHelpAfterError;
        this._showSuggestionAfterError = sourceCommand._showSuggestionAfterError;
        return this;
      }
      /**
       * @returns {Command[]}
       * @private
       */
      _getCommandAndAncestors() {
        const result = [];
        for (let command = this; command; command = command.parent) {
          result.push(command);
        }
        return result;
      }
      /**
       * Define a command.
       *
       * There are two styles of command: pay attention to where to put the description.
       *
       * @example
       * // Command implemented using action handler (description is supplied separately to `.command`)
       * program
       *   .command('clone <source> [destination]')
       *   .description('clone a repository into a newly created directory')
       *   .action((source, destination) => {
       *     console.log('clone command called');
       *   });
       *
       * // Command implemented using separate executable file (description is second parameter to `.command`)
       * program
       *   .command('start <service>', 'start named service')
       *   .command('stop [service]', 'stop named service, or all if no name supplied');
       *
       * @param {string} nameAndArgs - command name and arguments, args are `<required>` or `[optional]` and last may also be `variadic...`
       * @param {(object | string)} [actionOptsOrExecDesc] - configuration options (for action), or description (for executable)
       * @param {object} [execOpts] - configuration options (for executable)
       * @return {Command} returns new command for action handler, or `this` for executable command
       */
      command(nameAndArgs, actionOptsOrExecDesc, execOpts) {
        let desc = actionOptsOrExecDesc;
        let opts = execOpts;
        if (typeof desc === "object" && desc !== null) {
          opts = desc;
          desc = null;
        }
        opts = opts || {};
        const [, name, args] = nameAndArgs.match(/([^ ]+) *(.*)/);
        const cmd = this.createCommand(name);
        if (desc) {
          cmd.description(desc);
          cmd._executableHandler = true;
        }
        if (opts.isDefault) this._defaultCommandName = cmd._name;
        cmd._hidden = !!(opts.noHelp || opts.hidden);
        cmd._executableFile = opts.executableFile || null;
        if (args) cmd.arguments(args);
        this._registerCommand(cmd);
        cmd.parent = this;
        cmd.copyInheritedSettings(this);
        if (desc) return this;
        return cmd;
      }
      /**
       * Factory routine to create a new unattached command.
       *
       * See .command() for creating an attached subcommand, which uses this routine to
       * create the command. You can override createCommand to customise subcommands.
       *
       * @param {string} [name]
       * @return {Command} new command
       */
      createCommand(name) {
        return new _Command(name);
      }
      /**
       * You can customise the help with a subclass of Help by overriding createHelp,
       * or by overriding Help properties using configureHelp().
       *
       * @return {Help}
       */
      createHelp() {
        return Object.assign(new Help2(), this.configureHelp());
      }
      /**
       * You can customise the help by overriding Help properties using configureHelp(),
       * or with a subclass of Help by overriding createHelp().
       *
       * @param {object} [configuration] - configuration options
       * @return {(Command | object)} `this` command for chaining, or stored configuration
       */
      configureHelp(configuration) {
        if (configuration === void 0) return this._helpConfiguration;
        this._helpConfiguration = configuration;
        return this;
      }
      /**
       * The default output goes to stdout and stderr. You can customise this for special
       * applications. You can also customise the display of errors by overriding outputError.
       *
       * The configuration properties are all functions:
       *
       *     // change how output being written, defaults to stdout and stderr
       *     writeOut(str)
       *     writeErr(str)
       *     // change how output being written for errors, defaults to writeErr
       *     outputError(str, write) // used for displaying errors and not used for displaying help
       *     // specify width for wrapping help
       *     getOutHelpWidth()
       *     getErrHelpWidth()
       *     // color support, currently only used with Help
       *     getOutHasColors()
       *     getErrHasColors()
       *     stripColor() // used to remove ANSI escape codes if output does not have colors
       *
       * @param {object} [configuration] - configuration options
       * @return {(Command | object)} `this` command for chaining, or stored configuration
       */
      configureOutput(configuration) {
        if (configuration === void 0) return this._outputConfiguration;
        this._outputConfiguration = {
          ...this._outputConfiguration,
          ...configuration
        };
        return this;
      }
      /**
       * Display the help or a custom message after an error occurs.
       *
       * @param {(boolean|string)} [displayHelp]
       * @return {Command} `this` command for chaining
       */
      showHelpAfterError(displayHelp = true) {
        if (typeof displayHelp !== "string") displayHelp = !!displayHelp;
        this._showHelpAfterError = displayHelp;
        return this;
      }
      /**
       * Display suggestion of similar commands for unknown commands, or options for unknown options.
       *
       * @param {boolean} [displaySuggestion]
       * @return {Command} `this` command for chaining
       */
      showSuggestionAfterError(displaySuggestion = true) {
        this._showSuggestionAfterError = !!displaySuggestion;
        return this;
      }
      /**
       * Add a prepared subcommand.
       *
       * See .command() for creating an attached subcommand which inherits settings from its parent.
       *
       * @param {Command} cmd - new subcommand
       * @param {object} [opts] - configuration options
       * @return {Command} `this` command for chaining
       */
      addCommand(cmd, opts) {
        if (!cmd._name) {
          throw new Error(`Command passed to .addCommand() must have a name
- specify the name in Command constructor or using .name()`);
        }
        opts = opts || {};
        if (opts.isDefault) this._defaultCommandName = cmd._name;
        if (opts.noHelp || opts.hidden) cmd._hidden = true;
        this._registerCommand(cmd);
        cmd.parent = this;
        cmd._checkForBrokenPassThrough();
        return this;
      }
      /**
       * Factory routine to create a new unattached argument.
       *
       * See .argument() for creating an attached argument, which uses this routine to
       * create the argument. You can override createArgument to return a custom argument.
       *
       * @param {string} name
       * @param {string} [description]
       * @return {Argument} new argument
       */
      createArgument(name, description) {
        return new Argument2(name, description);
      }
      /**
       * Define argument syntax for command.
       *
       * The default is that the argument is required, and you can explicitly
       * indicate this with <> around the name. Put [] around the name for an optional argument.
       *
       * @example
       * program.argument('<input-file>');
       * program.argument('[output-file]');
       *
       * @param {string} name
       * @param {string} [description]
       * @param {(Function|*)} [parseArg] - custom argument processing function or default value
       * @param {*} [defaultValue]
       * @return {Command} `this` command for chaining
       */
      argument(name, description, parseArg, defaultValue) {
        const argument = this.createArgument(name, description);
        if (typeof parseArg === "function") {
          argument.default(defaultValue).argParser(parseArg);
        } else {
          argument.default(parseArg);
        }
        this.addArgument(argument);
        return this;
      }
      /**
       * Define argument syntax for command, adding multiple at once (without descriptions).
       *
       * See also .argument().
       *
       * @example
       * program.arguments('<cmd> [env]');
       *
       * @param {string} names
       * @return {Command} `this` command for chaining
       */
      arguments(names) {
        names.trim().split(/ +/).forEach((detail) => {
          this.argument(detail);
        });
        return this;
      }
      /**
       * Define argument syntax for command, adding a prepared argument.
       *
       * @param {Argument} argument
       * @return {Command} `this` command for chaining
       */
      addArgument(argument) {
        const previousArgument = this.registeredArguments.slice(-1)[0];
        if (previousArgument?.variadic) {
          throw new Error(
            `only the last argument can be variadic '${previousArgument.name()}'`
          );
        }
        if (argument.required && argument.defaultValue !== void 0 && argument.parseArg === void 0) {
          throw new Error(
            `a default value for a required argument is never used: '${argument.name()}'`
          );
        }
        this.registeredArguments.push(argument);
        return this;
      }
      /**
       * Customise or override default help command. By default a help command is automatically added if your command has subcommands.
       *
       * @example
       *    program.helpCommand('help [cmd]');
       *    program.helpCommand('help [cmd]', 'show help');
       *    program.helpCommand(false); // suppress default help command
       *    program.helpCommand(true); // add help command even if no subcommands
       *
       * @param {string|boolean} enableOrNameAndArgs - enable with custom name and/or arguments, or boolean to override whether added
       * @param {string} [description] - custom description
       * @return {Command} `this` command for chaining
       */
      helpCommand(enableOrNameAndArgs, description) {
        if (typeof enableOrNameAndArgs === "boolean") {
          this._addImplicitHelpCommand = enableOrNameAndArgs;
          if (enableOrNameAndArgs && this._defaultCommandGroup) {
            this._initCommandGroup(this._getHelpCommand());
          }
          return this;
        }
        const nameAndArgs = enableOrNameAndArgs ?? "help [command]";
        const [, helpName, helpArgs] = nameAndArgs.match(/([^ ]+) *(.*)/);
        const helpDescription = description ?? "display help for command";
        const helpCommand = this.createCommand(helpName);
        helpCommand.helpOption(false);
        if (helpArgs) helpCommand.arguments(helpArgs);
        if (helpDescription) helpCommand.description(helpDescription);
        this._addImplicitHelpCommand = true;
        this._helpCommand = helpCommand;
        if (enableOrNameAndArgs || description) this._initCommandGroup(helpCommand);
        return this;
      }
      /**
       * Add prepared custom help command.
       *
       * @param {(Command|string|boolean)} helpCommand - custom help command, or deprecated enableOrNameAndArgs as for `.helpCommand()`
       * @param {string} [deprecatedDescription] - deprecated custom description used with custom name only
       * @return {Command} `this` command for chaining
       */
      addHelpCommand(helpCommand, deprecatedDescription) {
        if (typeof helpCommand !== "object") {
          this.helpCommand(helpCommand, deprecatedDescription);
          return this;
        }
        this._addImplicitHelpCommand = true;
        this._helpCommand = helpCommand;
        this._initCommandGroup(helpCommand);
        return this;
      }
      /**
       * Lazy create help command.
       *
       * @return {(Command|null)}
       * @package
       */
      _getHelpCommand() {
        const hasImplicitHelpCommand = this._addImplicitHelpCommand ?? (this.commands.length && !this._actionHandler && !this._findCommand("help"));
        if (hasImplicitHelpCommand) {
          if (this._helpCommand === void 0) {
            this.helpCommand(void 0, void 0);
          }
          return this._helpCommand;
        }
        return null;
      }
      /**
       * Add hook for life cycle event.
       *
       * @param {string} event
       * @param {Function} listener
       * @return {Command} `this` command for chaining
       */
      hook(event, listener) {
        const allowedValues = ["preSubcommand", "preAction", "postAction"];
        if (!allowedValues.includes(event)) {
          throw new Error(`Unexpected value for event passed to hook : '${event}'.
Expecting one of '${allowedValues.join("', '")}'`);
        }
        if (this._lifeCycleHooks[event]) {
          this._lifeCycleHooks[event].push(listener);
        } else {
          this._lifeCycleHooks[event] = [listener];
        }
        return this;
      }
      /**
       * Register callback to use as replacement for calling process.exit.
       *
       * @param {Function} [fn] optional callback which will be passed a CommanderError, defaults to throwing
       * @return {Command} `this` command for chaining
       */
      exitOverride(fn) {
        if (fn) {
          this._exitCallback = fn;
        } else {
          this._exitCallback = (err) => {
            if (err.code !== "commander.executeSubCommandAsync") {
              throw err;
            } else {
            }
          };
        }
        return this;
      }
      /**
       * Call process.exit, and _exitCallback if defined.
       *
       * @param {number} exitCode exit code for using with process.exit
       * @param {string} code an id string representing the error
       * @param {string} message human-readable description of the error
       * @return never
       * @private
       */
      _exit(exitCode, code, message) {
        if (this._exitCallback) {
          this._exitCallback(new CommanderError2(exitCode, code, message));
        }
        process2.exit(exitCode);
      }
      /**
       * Register callback `fn` for the command.
       *
       * @example
       * program
       *   .command('serve')
       *   .description('start service')
       *   .action(function() {
       *      // do work here
       *   });
       *
       * @param {Function} fn
       * @return {Command} `this` command for chaining
       */
      action(fn) {
        const listener = (args) => {
          const expectedArgsCount = this.registeredArguments.length;
          const actionArgs = args.slice(0, expectedArgsCount);
          if (this._storeOptionsAsProperties) {
            actionArgs[expectedArgsCount] = this;
          } else {
            actionArgs[expectedArgsCount] = this.opts();
          }
          actionArgs.push(this);
          return fn.apply(this, actionArgs);
        };
        this._actionHandler = listener;
        return this;
      }
      /**
       * Factory routine to create a new unattached option.
       *
       * See .option() for creating an attached option, which uses this routine to
       * create the option. You can override createOption to return a custom option.
       *
       * @param {string} flags
       * @param {string} [description]
       * @return {Option} new option
       */
      createOption(flags, description) {
        return new Option2(flags, description);
      }
      /**
       * Wrap parseArgs to catch 'commander.invalidArgument'.
       *
       * @param {(Option | Argument)} target
       * @param {string} value
       * @param {*} previous
       * @param {string} invalidArgumentMessage
       * @private
       */
      _callParseArg(target, value, previous, invalidArgumentMessage) {
        try {
          return target.parseArg(value, previous);
        } catch (err) {
          if (err.code === "commander.invalidArgument") {
            const message = `${invalidArgumentMessage} ${err.message}`;
            this.error(message, { exitCode: err.exitCode, code: err.code });
          }
          throw err;
        }
      }
      /**
       * Check for option flag conflicts.
       * Register option if no conflicts found, or throw on conflict.
       *
       * @param {Option} option
       * @private
       */
      _registerOption(option) {
        const matchingOption = option.short && this._findOption(option.short) || option.long && this._findOption(option.long);
        if (matchingOption) {
          const matchingFlag = option.long && this._findOption(option.long) ? option.long : option.short;
          throw new Error(`Cannot add option '${option.flags}'${this._name && ` to command '${this._name}'`} due to conflicting flag '${matchingFlag}'
-  already used by option '${matchingOption.flags}'`);
        }
        this._initOptionGroup(option);
        this.options.push(option);
      }
      /**
       * Check for command name and alias conflicts with existing commands.
       * Register command if no conflicts found, or throw on conflict.
       *
       * @param {Command} command
       * @private
       */
      _registerCommand(command) {
        const knownBy = (cmd) => {
          return [cmd.name()].concat(cmd.aliases());
        };
        const alreadyUsed = knownBy(command).find(
          (name) => this._findCommand(name)
        );
        if (alreadyUsed) {
          const existingCmd = knownBy(this._findCommand(alreadyUsed)).join("|");
          const newCmd = knownBy(command).join("|");
          throw new Error(
            `cannot add command '${newCmd}' as already have command '${existingCmd}'`
          );
        }
        this._initCommandGroup(command);
        this.commands.push(command);
      }
      /**
       * Add an option.
       *
       * @param {Option} option
       * @return {Command} `this` command for chaining
       */
      addOption(option) {
        this._registerOption(option);
        const oname = option.name();
        const name = option.attributeName();
        if (option.negate) {
          const positiveLongFlag = option.long.replace(/^--no-/, "--");
          if (!this._findOption(positiveLongFlag)) {
            this.setOptionValueWithSource(
              name,
              option.defaultValue === void 0 ? true : option.defaultValue,
              "default"
            );
          }
        } else if (option.defaultValue !== void 0) {
          this.setOptionValueWithSource(name, option.defaultValue, "default");
        }
        const handleOptionValue = (val, invalidValueMessage, valueSource) => {
          if (val == null && option.presetArg !== void 0) {
            val = option.presetArg;
          }
          const oldValue = this.getOptionValue(name);
          if (val !== null && option.parseArg) {
            val = this._callParseArg(option, val, oldValue, invalidValueMessage);
          } else if (val !== null && option.variadic) {
            val = option._collectValue(val, oldValue);
          }
          if (val == null) {
            if (option.negate) {
              val = false;
            } else if (option.isBoolean() || option.optional) {
              val = true;
            } else {
              val = "";
            }
          }
          this.setOptionValueWithSource(name, val, valueSource);
        };
        this.on("option:" + oname, (val) => {
          const invalidValueMessage = `error: option '${option.flags}' argument '${val}' is invalid.`;
          handleOptionValue(val, invalidValueMessage, "cli");
        });
        if (option.envVar) {
          this.on("optionEnv:" + oname, (val) => {
            const invalidValueMessage = `error: option '${option.flags}' value '${val}' from env '${option.envVar}' is invalid.`;
            handleOptionValue(val, invalidValueMessage, "env");
          });
        }
        return this;
      }
      /**
       * Internal implementation shared by .option() and .requiredOption()
       *
       * @return {Command} `this` command for chaining
       * @private
       */
      _optionEx(config, flags, description, fn, defaultValue) {
        if (typeof flags === "object" && flags instanceof Option2) {
          throw new Error(
            "To add an Option object use addOption() instead of option() or requiredOption()"
          );
        }
        const option = this.createOption(flags, description);
        option.makeOptionMandatory(!!config.mandatory);
        if (typeof fn === "function") {
          option.default(defaultValue).argParser(fn);
        } else if (fn instanceof RegExp) {
          const regex = fn;
          fn = (val, def) => {
            const m = regex.exec(val);
            return m ? m[0] : def;
          };
          option.default(defaultValue).argParser(fn);
        } else {
          option.default(fn);
        }
        return this.addOption(option);
      }
      /**
       * Define option with `flags`, `description`, and optional argument parsing function or `defaultValue` or both.
       *
       * The `flags` string contains the short and/or long flags, separated by comma, a pipe or space. A required
       * option-argument is indicated by `<>` and an optional option-argument by `[]`.
       *
       * See the README for more details, and see also addOption() and requiredOption().
       *
       * @example
       * program
       *     .option('-p, --pepper', 'add pepper')
       *     .option('--pt, --pizza-type <TYPE>', 'type of pizza') // required option-argument
       *     .option('-c, --cheese [CHEESE]', 'add extra cheese', 'mozzarella') // optional option-argument with default
       *     .option('-t, --tip <VALUE>', 'add tip to purchase cost', parseFloat) // custom parse function
       *
       * @param {string} flags
       * @param {string} [description]
       * @param {(Function|*)} [parseArg] - custom option processing function or default value
       * @param {*} [defaultValue]
       * @return {Command} `this` command for chaining
       */
      option(flags, description, parseArg, defaultValue) {
        return this._optionEx({}, flags, description, parseArg, defaultValue);
      }
      /**
       * Add a required option which must have a value after parsing. This usually means
       * the option must be specified on the command line. (Otherwise the same as .option().)
       *
       * The `flags` string contains the short and/or long flags, separated by comma, a pipe or space.
       *
       * @param {string} flags
       * @param {string} [description]
       * @param {(Function|*)} [parseArg] - custom option processing function or default value
       * @param {*} [defaultValue]
       * @return {Command} `this` command for chaining
       */
      requiredOption(flags, description, parseArg, defaultValue) {
        return this._optionEx(
          { mandatory: true },
          flags,
          description,
          parseArg,
          defaultValue
        );
      }
      /**
       * Alter parsing of short flags with optional values.
       *
       * @example
       * // for `.option('-f,--flag [value]'):
       * program.combineFlagAndOptionalValue(true);  // `-f80` is treated like `--flag=80`, this is the default behaviour
       * program.combineFlagAndOptionalValue(false) // `-fb` is treated like `-f -b`
       *
       * @param {boolean} [combine] - if `true` or omitted, an optional value can be specified directly after the flag.
       * @return {Command} `this` command for chaining
       */
      combineFlagAndOptionalValue(combine = true) {
        this._combineFlagAndOptionalValue = !!combine;
        return this;
      }
      /**
       * Allow unknown options on the command line.
       *
       * @param {boolean} [allowUnknown] - if `true` or omitted, no error will be thrown for unknown options.
       * @return {Command} `this` command for chaining
       */
      allowUnknownOption(allowUnknown = true) {
        this._allowUnknownOption = !!allowUnknown;
        return this;
      }
      /**
       * Allow excess command-arguments on the command line. Pass false to make excess arguments an error.
       *
       * @param {boolean} [allowExcess] - if `true` or omitted, no error will be thrown for excess arguments.
       * @return {Command} `this` command for chaining
       */
      allowExcessArguments(allowExcess = true) {
        this._allowExcessArguments = !!allowExcess;
        return this;
      }
      /**
       * Enable positional options. Positional means global options are specified before subcommands which lets
       * subcommands reuse the same option names, and also enables subcommands to turn on passThroughOptions.
       * The default behaviour is non-positional and global options may appear anywhere on the command line.
       *
       * @param {boolean} [positional]
       * @return {Command} `this` command for chaining
       */
      enablePositionalOptions(positional = true) {
        this._enablePositionalOptions = !!positional;
        return this;
      }
      /**
       * Pass through options that come after command-arguments rather than treat them as command-options,
       * so actual command-options come before command-arguments. Turning this on for a subcommand requires
       * positional options to have been enabled on the program (parent commands).
       * The default behaviour is non-positional and options may appear before or after command-arguments.
       *
       * @param {boolean} [passThrough] for unknown options.
       * @return {Command} `this` command for chaining
       */
      passThroughOptions(passThrough = true) {
        this._passThroughOptions = !!passThrough;
        this._checkForBrokenPassThrough();
        return this;
      }
      /**
       * @private
       */
      _checkForBrokenPassThrough() {
        if (this.parent && this._passThroughOptions && !this.parent._enablePositionalOptions) {
          throw new Error(
            `passThroughOptions cannot be used for '${this._name}' without turning on enablePositionalOptions for parent command(s)`
          );
        }
      }
      /**
       * Whether to store option values as properties on command object,
       * or store separately (specify false). In both cases the option values can be accessed using .opts().
       *
       * @param {boolean} [storeAsProperties=true]
       * @return {Command} `this` command for chaining
       */
      storeOptionsAsProperties(storeAsProperties = true) {
        if (this.options.length) {
          throw new Error("call .storeOptionsAsProperties() before adding options");
        }
        if (Object.keys(this._optionValues).length) {
          throw new Error(
            "call .storeOptionsAsProperties() before setting option values"
          );
        }
        this._storeOptionsAsProperties = !!storeAsProperties;
        return this;
      }
      /**
       * Retrieve option value.
       *
       * @param {string} key
       * @return {object} value
       */
      getOptionValue(key) {
        if (this._storeOptionsAsProperties) {
          return this[key];
        }
        return this._optionValues[key];
      }
      /**
       * Store option value.
       *
       * @param {string} key
       * @param {object} value
       * @return {Command} `this` command for chaining
       */
      setOptionValue(key, value) {
        return this.setOptionValueWithSource(key, value, void 0);
      }
      /**
       * Store option value and where the value came from.
       *
       * @param {string} key
       * @param {object} value
       * @param {string} source - expected values are default/config/env/cli/implied
       * @return {Command} `this` command for chaining
       */
      setOptionValueWithSource(key, value, source) {
        if (this._storeOptionsAsProperties) {
          this[key] = value;
        } else {
          this._optionValues[key] = value;
        }
        this._optionValueSources[key] = source;
        return this;
      }
      /**
       * Get source of option value.
       * Expected values are default | config | env | cli | implied
       *
       * @param {string} key
       * @return {string}
       */
      getOptionValueSource(key) {
        return this._optionValueSources[key];
      }
      /**
       * Get source of option value. See also .optsWithGlobals().
       * Expected values are default | config | env | cli | implied
       *
       * @param {string} key
       * @return {string}
       */
      getOptionValueSourceWithGlobals(key) {
        let source;
        this._getCommandAndAncestors().forEach((cmd) => {
          if (cmd.getOptionValueSource(key) !== void 0) {
            source = cmd.getOptionValueSource(key);
          }
        });
        return source;
      }
      /**
       * Get user arguments from implied or explicit arguments.
       * Side-effects: set _scriptPath if args included script. Used for default program name, and subcommand searches.
       *
       * @private
       */
      _prepareUserArgs(argv, parseOptions) {
        if (argv !== void 0 && !Array.isArray(argv)) {
          throw new Error("first parameter to parse must be array or undefined");
        }
        parseOptions = parseOptions || {};
        if (argv === void 0 && parseOptions.from === void 0) {
          if (process2.versions?.electron) {
            parseOptions.from = "electron";
          }
          const execArgv = process2.execArgv ?? [];
          if (execArgv.includes("-e") || execArgv.includes("--eval") || execArgv.includes("-p") || execArgv.includes("--print")) {
            parseOptions.from = "eval";
          }
        }
        if (argv === void 0) {
          argv = process2.argv;
        }
        this.rawArgs = argv.slice();
        let userArgs;
        switch (parseOptions.from) {
          case void 0:
          case "node":
            this._scriptPath = argv[1];
            userArgs = argv.slice(2);
            break;
          case "electron":
            if (process2.defaultApp) {
              this._scriptPath = argv[1];
              userArgs = argv.slice(2);
            } else {
              userArgs = argv.slice(1);
            }
            break;
          case "user":
            userArgs = argv.slice(0);
            break;
          case "eval":
            userArgs = argv.slice(1);
            break;
          default:
            throw new Error(
              `unexpected parse option { from: '${parseOptions.from}' }`
            );
        }
        if (!this._name && this._scriptPath)
          this.nameFromFilename(this._scriptPath);
        this._name = this._name || "program";
        return userArgs;
      }
      /**
       * Parse `argv`, setting options and invoking commands when defined.
       *
       * Use parseAsync instead of parse if any of your action handlers are async.
       *
       * Call with no parameters to parse `process.argv`. Detects Electron and special node options like `node --eval`. Easy mode!
       *
       * Or call with an array of strings to parse, and optionally where the user arguments start by specifying where the arguments are `from`:
       * - `'node'`: default, `argv[0]` is the application and `argv[1]` is the script being run, with user arguments after that
       * - `'electron'`: `argv[0]` is the application and `argv[1]` varies depending on whether the electron application is packaged
       * - `'user'`: just user arguments
       *
       * @example
       * program.parse(); // parse process.argv and auto-detect electron and special node flags
       * program.parse(process.argv); // assume argv[0] is app and argv[1] is script
       * program.parse(my-args, { from: 'user' }); // just user supplied arguments, nothing special about argv[0]
       *
       * @param {string[]} [argv] - optional, defaults to process.argv
       * @param {object} [parseOptions] - optionally specify style of options with from: node/user/electron
       * @param {string} [parseOptions.from] - where the args are from: 'node', 'user', 'electron'
       * @return {Command} `this` command for chaining
       */
      parse(argv, parseOptions) {
        this._prepareForParse();
        const userArgs = this._prepareUserArgs(argv, parseOptions);
        this._parseCommand([], userArgs);
        return this;
      }
      /**
       * Parse `argv`, setting options and invoking commands when defined.
       *
       * Call with no parameters to parse `process.argv`. Detects Electron and special node options like `node --eval`. Easy mode!
       *
       * Or call with an array of strings to parse, and optionally where the user arguments start by specifying where the arguments are `from`:
       * - `'node'`: default, `argv[0]` is the application and `argv[1]` is the script being run, with user arguments after that
       * - `'electron'`: `argv[0]` is the application and `argv[1]` varies depending on whether the electron application is packaged
       * - `'user'`: just user arguments
       *
       * @example
       * await program.parseAsync(); // parse process.argv and auto-detect electron and special node flags
       * await program.parseAsync(process.argv); // assume argv[0] is app and argv[1] is script
       * await program.parseAsync(my-args, { from: 'user' }); // just user supplied arguments, nothing special about argv[0]
       *
       * @param {string[]} [argv]
       * @param {object} [parseOptions]
       * @param {string} parseOptions.from - where the args are from: 'node', 'user', 'electron'
       * @return {Promise}
       */
      async parseAsync(argv, parseOptions) {
        this._prepareForParse();
        const userArgs = this._prepareUserArgs(argv, parseOptions);
        await this._parseCommand([], userArgs);
        return this;
      }
      _prepareForParse() {
        if (this._savedState === null) {
          this.saveStateBeforeParse();
        } else {
          this.restoreStateBeforeParse();
        }
      }
      /**
       * Called the first time parse is called to save state and allow a restore before subsequent calls to parse.
       * Not usually called directly, but available for subclasses to save their custom state.
       *
       * This is called in a lazy way. Only commands used in parsing chain will have state saved.
       */
      saveStateBeforeParse() {
        this._savedState = {
          // name is stable if supplied by author, but may be unspecified for root command and deduced during parsing
          _name: this._name,
          // option values before parse have default values (including false for negated options)
          // shallow clones
          _optionValues: { ...this._optionValues },
          _optionValueSources: { ...this._optionValueSources }
        };
      }
      /**
       * Restore state before parse for calls after the first.
       * Not usually called directly, but available for subclasses to save their custom state.
       *
       * This is called in a lazy way. Only commands used in parsing chain will have state restored.
       */
      restoreStateBeforeParse() {
        if (this._storeOptionsAsProperties)
          throw new Error(`Can not call parse again when storeOptionsAsProperties is true.
- either make a new Command for each call to parse, or stop storing options as properties`);
        this._name = this._savedState._name;
        this._scriptPath = null;
        this.rawArgs = [];
        this._optionValues = { ...this._savedState._optionValues };
        this._optionValueSources = { ...this._savedState._optionValueSources };
        this.args = [];
        this.processedArgs = [];
      }
      /**
       * Throw if expected executable is missing. Add lots of help for author.
       *
       * @param {string} executableFile
       * @param {string} executableDir
       * @param {string} subcommandName
       */
      _checkForMissingExecutable(executableFile, executableDir, subcommandName) {
        if (fs.existsSync(executableFile)) return;
        const executableDirMessage = executableDir ? `searched for local subcommand relative to directory '${executableDir}'` : "no directory for search for local subcommand, use .executableDir() to supply a custom directory";
        const executableMissing = `'${executableFile}' does not exist
 - if '${subcommandName}' is not meant to be an executable command, remove description parameter from '.command()' and use '.description()' instead
 - if the default executable name is not suitable, use the executableFile option to supply a custom name or path
 - ${executableDirMessage}`;
        throw new Error(executableMissing);
      }
      /**
       * Execute a sub-command executable.
       *
       * @private
       */
      _executeSubCommand(subcommand, args) {
        args = args.slice();
        let launchWithNode = false;
        const sourceExt = [".js", ".ts", ".tsx", ".mjs", ".cjs"];
        function findFile(baseDir, baseName) {
          const localBin = path.resolve(baseDir, baseName);
          if (fs.existsSync(localBin)) return localBin;
          if (sourceExt.includes(path.extname(baseName))) return void 0;
          const foundExt = sourceExt.find(
            (ext) => fs.existsSync(`${localBin}${ext}`)
          );
          if (foundExt) return `${localBin}${foundExt}`;
          return void 0;
        }
        this._checkForMissingMandatoryOptions();
        this._checkForConflictingOptions();
        let executableFile = subcommand._executableFile || `${this._name}-${subcommand._name}`;
        let executableDir = this._executableDir || "";
        if (this._scriptPath) {
          let resolvedScriptPath;
          try {
            resolvedScriptPath = fs.realpathSync(this._scriptPath);
          } catch {
            resolvedScriptPath = this._scriptPath;
          }
          executableDir = path.resolve(
            path.dirname(resolvedScriptPath),
            executableDir
          );
        }
        if (executableDir) {
          let localFile = findFile(executableDir, executableFile);
          if (!localFile && !subcommand._executableFile && this._scriptPath) {
            const legacyName = path.basename(
              this._scriptPath,
              path.extname(this._scriptPath)
            );
            if (legacyName !== this._name) {
              localFile = findFile(
                executableDir,
                `${legacyName}-${subcommand._name}`
              );
            }
          }
          executableFile = localFile || executableFile;
        }
        launchWithNode = sourceExt.includes(path.extname(executableFile));
        let proc;
        if (process2.platform !== "win32") {
          if (launchWithNode) {
            args.unshift(executableFile);
            args = incrementNodeInspectorPort(process2.execArgv).concat(args);
            proc = childProcess.spawn(process2.argv[0], args, { stdio: "inherit" });
          } else {
            proc = childProcess.spawn(executableFile, args, { stdio: "inherit" });
          }
        } else {
          this._checkForMissingExecutable(
            executableFile,
            executableDir,
            subcommand._name
          );
          args.unshift(executableFile);
          args = incrementNodeInspectorPort(process2.execArgv).concat(args);
          proc = childProcess.spawn(process2.execPath, args, { stdio: "inherit" });
        }
        if (!proc.killed) {
          const signals = ["SIGUSR1", "SIGUSR2", "SIGTERM", "SIGINT", "SIGHUP"];
          signals.forEach((signal) => {
            process2.on(signal, () => {
              if (proc.killed === false && proc.exitCode === null) {
                proc.kill(signal);
              }
            });
          });
        }
        const exitCallback = this._exitCallback;
        proc.on("close", (code) => {
          code = code ?? 1;
          if (!exitCallback) {
            process2.exit(code);
          } else {
            exitCallback(
              new CommanderError2(
                code,
                "commander.executeSubCommandAsync",
                "(close)"
              )
            );
          }
        });
        proc.on("error", (err) => {
          if (err.code === "ENOENT") {
            this._checkForMissingExecutable(
              executableFile,
              executableDir,
              subcommand._name
            );
          } else if (err.code === "EACCES") {
            throw new Error(`'${executableFile}' not executable`);
          }
          if (!exitCallback) {
            process2.exit(1);
          } else {
            const wrappedError = new CommanderError2(
              1,
              "commander.executeSubCommandAsync",
              "(error)"
            );
            wrappedError.nestedError = err;
            exitCallback(wrappedError);
          }
        });
        this.runningCommand = proc;
      }
      /**
       * @private
       */
      _dispatchSubcommand(commandName, operands, unknown) {
        const subCommand = this._findCommand(commandName);
        if (!subCommand) this.help({ error: true });
        subCommand._prepareForParse();
        let promiseChain;
        promiseChain = this._chainOrCallSubCommandHook(
          promiseChain,
          subCommand,
          "preSubcommand"
        );
        promiseChain = this._chainOrCall(promiseChain, () => {
          if (subCommand._executableHandler) {
            this._executeSubCommand(subCommand, operands.concat(unknown));
          } else {
            return subCommand._parseCommand(operands, unknown);
          }
        });
        return promiseChain;
      }
      /**
       * Invoke help directly if possible, or dispatch if necessary.
       * e.g. help foo
       *
       * @private
       */
      _dispatchHelpCommand(subcommandName) {
        if (!subcommandName) {
          this.help();
        }
        const subCommand = this._findCommand(subcommandName);
        if (subCommand && !subCommand._executableHandler) {
          subCommand.help();
        }
        return this._dispatchSubcommand(
          subcommandName,
          [],
          [this._getHelpOption()?.long ?? this._getHelpOption()?.short ?? "--help"]
        );
      }
      /**
       * Check this.args against expected this.registeredArguments.
       *
       * @private
       */
      _checkNumberOfArguments() {
        this.registeredArguments.forEach((arg, i) => {
          if (arg.required && this.args[i] == null) {
            this.missingArgument(arg.name());
          }
        });
        if (this.registeredArguments.length > 0 && this.registeredArguments[this.registeredArguments.length - 1].variadic) {
          return;
        }
        if (this.args.length > this.registeredArguments.length) {
          this._excessArguments(this.args);
        }
      }
      /**
       * Process this.args using this.registeredArguments and save as this.processedArgs!
       *
       * @private
       */
      _processArguments() {
        const myParseArg = (argument, value, previous) => {
          let parsedValue = value;
          if (value !== null && argument.parseArg) {
            const invalidValueMessage = `error: command-argument value '${value}' is invalid for argument '${argument.name()}'.`;
            parsedValue = this._callParseArg(
              argument,
              value,
              previous,
              invalidValueMessage
            );
          }
          return parsedValue;
        };
        this._checkNumberOfArguments();
        const processedArgs = [];
        this.registeredArguments.forEach((declaredArg, index) => {
          let value = declaredArg.defaultValue;
          if (declaredArg.variadic) {
            if (index < this.args.length) {
              value = this.args.slice(index);
              if (declaredArg.parseArg) {
                value = value.reduce((processed, v) => {
                  return myParseArg(declaredArg, v, processed);
                }, declaredArg.defaultValue);
              }
            } else if (value === void 0) {
              value = [];
            }
          } else if (index < this.args.length) {
            value = this.args[index];
            if (declaredArg.parseArg) {
              value = myParseArg(declaredArg, value, declaredArg.defaultValue);
            }
          }
          processedArgs[index] = value;
        });
        this.processedArgs = processedArgs;
      }
      /**
       * Once we have a promise we chain, but call synchronously until then.
       *
       * @param {(Promise|undefined)} promise
       * @param {Function} fn
       * @return {(Promise|undefined)}
       * @private
       */
      _chainOrCall(promise, fn) {
        if (promise?.then && typeof promise.then === "function") {
          return promise.then(() => fn());
        }
        return fn();
      }
      /**
       *
       * @param {(Promise|undefined)} promise
       * @param {string} event
       * @return {(Promise|undefined)}
       * @private
       */
      _chainOrCallHooks(promise, event) {
        let result = promise;
        const hooks = [];
        this._getCommandAndAncestors().reverse().filter((cmd) => cmd._lifeCycleHooks[event] !== void 0).forEach((hookedCommand) => {
          hookedCommand._lifeCycleHooks[event].forEach((callback) => {
            hooks.push({ hookedCommand, callback });
          });
        });
        if (event === "postAction") {
          hooks.reverse();
        }
        hooks.forEach((hookDetail) => {
          result = this._chainOrCall(result, () => {
            return hookDetail.callback(hookDetail.hookedCommand, this);
          });
        });
        return result;
      }
      /**
       *
       * @param {(Promise|undefined)} promise
       * @param {Command} subCommand
       * @param {string} event
       * @return {(Promise|undefined)}
       * @private
       */
      _chainOrCallSubCommandHook(promise, subCommand, event) {
        let result = promise;
        if (this._lifeCycleHooks[event] !== void 0) {
          this._lifeCycleHooks[event].forEach((hook) => {
            result = this._chainOrCall(result, () => {
              return hook(this, subCommand);
            });
          });
        }
        return result;
      }
      /**
       * Process arguments in context of this command.
       * Returns action result, in case it is a promise.
       *
       * @private
       */
      _parseCommand(operands, unknown) {
        const parsed = this.parseOptions(unknown);
        this._parseOptionsEnv();
        this._parseOptionsImplied();
        operands = operands.concat(parsed.operands);
        unknown = parsed.unknown;
        this.args = operands.concat(unknown);
        if (operands && this._findCommand(operands[0])) {
          return this._dispatchSubcommand(operands[0], operands.slice(1), unknown);
        }
        if (this._getHelpCommand() && operands[0] === this._getHelpCommand().name()) {
          return this._dispatchHelpCommand(operands[1]);
        }
        if (this._defaultCommandName) {
          this._outputHelpIfRequested(unknown);
          return this._dispatchSubcommand(
            this._defaultCommandName,
            operands,
            unknown
          );
        }
        if (this.commands.length && this.args.length === 0 && !this._actionHandler && !this._defaultCommandName) {
          this.help({ error: true });
        }
        this._outputHelpIfRequested(parsed.unknown);
        this._checkForMissingMandatoryOptions();
        this._checkForConflictingOptions();
        const checkForUnknownOptions = () => {
          if (parsed.unknown.length > 0) {
            this.unknownOption(parsed.unknown[0]);
          }
        };
        const commandEvent = `command:${this.name()}`;
        if (this._actionHandler) {
          checkForUnknownOptions();
          this._processArguments();
          let promiseChain;
          promiseChain = this._chainOrCallHooks(promiseChain, "preAction");
          promiseChain = this._chainOrCall(
            promiseChain,
            () => this._actionHandler(this.processedArgs)
          );
          if (this.parent) {
            promiseChain = this._chainOrCall(promiseChain, () => {
              this.parent.emit(commandEvent, operands, unknown);
            });
          }
          promiseChain = this._chainOrCallHooks(promiseChain, "postAction");
          return promiseChain;
        }
        if (this.parent?.listenerCount(commandEvent)) {
          checkForUnknownOptions();
          this._processArguments();
          this.parent.emit(commandEvent, operands, unknown);
        } else if (operands.length) {
          if (this._findCommand("*")) {
            return this._dispatchSubcommand("*", operands, unknown);
          }
          if (this.listenerCount("command:*")) {
            this.emit("command:*", operands, unknown);
          } else if (this.commands.length) {
            this.unknownCommand();
          } else {
            checkForUnknownOptions();
            this._processArguments();
          }
        } else if (this.commands.length) {
          checkForUnknownOptions();
          this.help({ error: true });
        } else {
          checkForUnknownOptions();
          this._processArguments();
        }
      }
      /**
       * Find matching command.
       *
       * @private
       * @return {Command | undefined}
       */
      _findCommand(name) {
        if (!name) return void 0;
        return this.commands.find(
          (cmd) => cmd._name === name || cmd._aliases.includes(name)
        );
      }
      /**
       * Return an option matching `arg` if any.
       *
       * @param {string} arg
       * @return {Option}
       * @package
       */
      _findOption(arg) {
        return this.options.find((option) => option.is(arg));
      }
      /**
       * Display an error message if a mandatory option does not have a value.
       * Called after checking for help flags in leaf subcommand.
       *
       * @private
       */
      _checkForMissingMandatoryOptions() {
        this._getCommandAndAncestors().forEach((cmd) => {
          cmd.options.forEach((anOption) => {
            if (anOption.mandatory && cmd.getOptionValue(anOption.attributeName()) === void 0) {
              cmd.missingMandatoryOptionValue(anOption);
            }
          });
        });
      }
      /**
       * Display an error message if conflicting options are used together in this.
       *
       * @private
       */
      _checkForConflictingLocalOptions() {
        const definedNonDefaultOptions = this.options.filter((option) => {
          const optionKey = option.attributeName();
          if (this.getOptionValue(optionKey) === void 0) {
            return false;
          }
          return this.getOptionValueSource(optionKey) !== "default";
        });
        const optionsWithConflicting = definedNonDefaultOptions.filter(
          (option) => option.conflictsWith.length > 0
        );
        optionsWithConflicting.forEach((option) => {
          const conflictingAndDefined = definedNonDefaultOptions.find(
            (defined) => option.conflictsWith.includes(defined.attributeName())
          );
          if (conflictingAndDefined) {
            this._conflictingOption(option, conflictingAndDefined);
          }
        });
      }
      /**
       * Display an error message if conflicting options are used together.
       * Called after checking for help flags in leaf subcommand.
       *
       * @private
       */
      _checkForConflictingOptions() {
        this._getCommandAndAncestors().forEach((cmd) => {
          cmd._checkForConflictingLocalOptions();
        });
      }
      /**
       * Parse options from `argv` removing known options,
       * and return argv split into operands and unknown arguments.
       *
       * Side effects: modifies command by storing options. Does not reset state if called again.
       *
       * Examples:
       *
       *     argv => operands, unknown
       *     --known kkk op => [op], []
       *     op --known kkk => [op], []
       *     sub --unknown uuu op => [sub], [--unknown uuu op]
       *     sub -- --unknown uuu op => [sub --unknown uuu op], []
       *
       * @param {string[]} args
       * @return {{operands: string[], unknown: string[]}}
       */
      parseOptions(args) {
        const operands = [];
        const unknown = [];
        let dest = operands;
        function maybeOption(arg) {
          return arg.length > 1 && arg[0] === "-";
        }
        const negativeNumberArg = (arg) => {
          if (!/^-(\d+|\d*\.\d+)(e[+-]?\d+)?$/.test(arg)) return false;
          return !this._getCommandAndAncestors().some(
            (cmd) => cmd.options.map((opt) => opt.short).some((short) => /^-\d$/.test(short))
          );
        };
        let activeVariadicOption = null;
        let activeGroup = null;
        let i = 0;
        while (i < args.length || activeGroup) {
          const arg = activeGroup ?? args[i++];
          activeGroup = null;
          if (arg === "--") {
            if (dest === unknown) dest.push(arg);
            dest.push(...args.slice(i));
            break;
          }
          if (activeVariadicOption && (!maybeOption(arg) || negativeNumberArg(arg))) {
            this.emit(`option:${activeVariadicOption.name()}`, arg);
            continue;
          }
          activeVariadicOption = null;
          if (maybeOption(arg)) {
            const option = this._findOption(arg);
            if (option) {
              if (option.required) {
                const value = args[i++];
                if (value === void 0) this.optionMissingArgument(option);
                this.emit(`option:${option.name()}`, value);
              } else if (option.optional) {
                let value = null;
                if (i < args.length && (!maybeOption(args[i]) || negativeNumberArg(args[i]))) {
                  value = args[i++];
                }
                this.emit(`option:${option.name()}`, value);
              } else {
                this.emit(`option:${option.name()}`);
              }
              activeVariadicOption = option.variadic ? option : null;
              continue;
            }
          }
          if (arg.length > 2 && arg[0] === "-" && arg[1] !== "-") {
            const option = this._findOption(`-${arg[1]}`);
            if (option) {
              if (option.required || option.optional && this._combineFlagAndOptionalValue) {
                this.emit(`option:${option.name()}`, arg.slice(2));
              } else {
                this.emit(`option:${option.name()}`);
                activeGroup = `-${arg.slice(2)}`;
              }
              continue;
            }
          }
          if (/^--[^=]+=/.test(arg)) {
            const index = arg.indexOf("=");
            const option = this._findOption(arg.slice(0, index));
            if (option && (option.required || option.optional)) {
              this.emit(`option:${option.name()}`, arg.slice(index + 1));
              continue;
            }
          }
          if (dest === operands && maybeOption(arg) && !(this.commands.length === 0 && negativeNumberArg(arg))) {
            dest = unknown;
          }
          if ((this._enablePositionalOptions || this._passThroughOptions) && operands.length === 0 && unknown.length === 0) {
            if (this._findCommand(arg)) {
              operands.push(arg);
              unknown.push(...args.slice(i));
              break;
            } else if (this._getHelpCommand() && arg === this._getHelpCommand().name()) {
              operands.push(arg, ...args.slice(i));
              break;
            } else if (this._defaultCommandName) {
              unknown.push(arg, ...args.slice(i));
              break;
            }
          }
          if (this._passThroughOptions) {
            dest.push(arg, ...args.slice(i));
            break;
          }
          dest.push(arg);
        }
        return { operands, unknown };
      }
      /**
       * Return an object containing local option values as key-value pairs.
       *
       * @return {object}
       */
      opts() {
        if (this._storeOptionsAsProperties) {
          const result = {};
          const len = this.options.length;
          for (let i = 0; i < len; i++) {
            const key = this.options[i].attributeName();
            result[key] = key === this._versionOptionName ? this._version : this[key];
          }
          return result;
        }
        return this._optionValues;
      }
      /**
       * Return an object containing merged local and global option values as key-value pairs.
       *
       * @return {object}
       */
      optsWithGlobals() {
        return this._getCommandAndAncestors().reduce(
          (combinedOptions, cmd) => Object.assign(combinedOptions, cmd.opts()),
          {}
        );
      }
      /**
       * Display error message and exit (or call exitOverride).
       *
       * @param {string} message
       * @param {object} [errorOptions]
       * @param {string} [errorOptions.code] - an id string representing the error
       * @param {number} [errorOptions.exitCode] - used with process.exit
       */
      error(message, errorOptions) {
        this._outputConfiguration.outputError(
          `${message}
`,
          this._outputConfiguration.writeErr
        );
        if (typeof this._showHelpAfterError === "string") {
          this._outputConfiguration.writeErr(`${this._showHelpAfterError}
`);
        } else if (this._showHelpAfterError) {
          this._outputConfiguration.writeErr("\n");
          this.outputHelp({ error: true });
        }
        const config = errorOptions || {};
        const exitCode = config.exitCode || 1;
        const code = config.code || "commander.error";
        this._exit(exitCode, code, message);
      }
      /**
       * Apply any option related environment variables, if option does
       * not have a value from cli or client code.
       *
       * @private
       */
      _parseOptionsEnv() {
        this.options.forEach((option) => {
          if (option.envVar && option.envVar in process2.env) {
            const optionKey = option.attributeName();
            if (this.getOptionValue(optionKey) === void 0 || ["default", "config", "env"].includes(
              this.getOptionValueSource(optionKey)
            )) {
              if (option.required || option.optional) {
                this.emit(`optionEnv:${option.name()}`, process2.env[option.envVar]);
              } else {
                this.emit(`optionEnv:${option.name()}`);
              }
            }
          }
        });
      }
      /**
       * Apply any implied option values, if option is undefined or default value.
       *
       * @private
       */
      _parseOptionsImplied() {
        const dualHelper = new DualOptions(this.options);
        const hasCustomOptionValue = (optionKey) => {
          return this.getOptionValue(optionKey) !== void 0 && !["default", "implied"].includes(this.getOptionValueSource(optionKey));
        };
        this.options.filter(
          (option) => option.implied !== void 0 && hasCustomOptionValue(option.attributeName()) && dualHelper.valueFromOption(
            this.getOptionValue(option.attributeName()),
            option
          )
        ).forEach((option) => {
          Object.keys(option.implied).filter((impliedKey) => !hasCustomOptionValue(impliedKey)).forEach((impliedKey) => {
            this.setOptionValueWithSource(
              impliedKey,
              option.implied[impliedKey],
              "implied"
            );
          });
        });
      }
      /**
       * Argument `name` is missing.
       *
       * @param {string} name
       * @private
       */
      missingArgument(name) {
        const message = `error: missing required argument '${name}'`;
        this.error(message, { code: "commander.missingArgument" });
      }
      /**
       * `Option` is missing an argument.
       *
       * @param {Option} option
       * @private
       */
      optionMissingArgument(option) {
        const message = `error: option '${option.flags}' argument missing`;
        this.error(message, { code: "commander.optionMissingArgument" });
      }
      /**
       * `Option` does not have a value, and is a mandatory option.
       *
       * @param {Option} option
       * @private
       */
      missingMandatoryOptionValue(option) {
        const message = `error: required option '${option.flags}' not specified`;
        this.error(message, { code: "commander.missingMandatoryOptionValue" });
      }
      /**
       * `Option` conflicts with another option.
       *
       * @param {Option} option
       * @param {Option} conflictingOption
       * @private
       */
      _conflictingOption(option, conflictingOption) {
        const findBestOptionFromValue = (option2) => {
          const optionKey = option2.attributeName();
          const optionValue = this.getOptionValue(optionKey);
          const negativeOption = this.options.find(
            (target) => target.negate && optionKey === target.attributeName()
          );
          const positiveOption = this.options.find(
            (target) => !target.negate && optionKey === target.attributeName()
          );
          if (negativeOption && (negativeOption.presetArg === void 0 && optionValue === false || negativeOption.presetArg !== void 0 && optionValue === negativeOption.presetArg)) {
            return negativeOption;
          }
          return positiveOption || option2;
        };
        const getErrorMessage = (option2) => {
          const bestOption = findBestOptionFromValue(option2);
          const optionKey = bestOption.attributeName();
          const source = this.getOptionValueSource(optionKey);
          if (source === "env") {
            return `environment variable '${bestOption.envVar}'`;
          }
          return `option '${bestOption.flags}'`;
        };
        const message = `error: ${getErrorMessage(option)} cannot be used with ${getErrorMessage(conflictingOption)}`;
        this.error(message, { code: "commander.conflictingOption" });
      }
      /**
       * Unknown option `flag`.
       *
       * @param {string} flag
       * @private
       */
      unknownOption(flag) {
        if (this._allowUnknownOption) return;
        let suggestion = "";
        if (flag.startsWith("--") && this._showSuggestionAfterError) {
          let candidateFlags = [];
          let command = this;
          do {
            const moreFlags = command.createHelp().visibleOptions(command).filter((option) => option.long).map((option) => option.long);
            candidateFlags = candidateFlags.concat(moreFlags);
            command = command.parent;
          } while (command && !command._enablePositionalOptions);
          suggestion = suggestSimilar(flag, candidateFlags);
        }
        const message = `error: unknown option '${flag}'${suggestion}`;
        this.error(message, { code: "commander.unknownOption" });
      }
      /**
       * Excess arguments, more than expected.
       *
       * @param {string[]} receivedArgs
       * @private
       */
      _excessArguments(receivedArgs) {
        if (this._allowExcessArguments) return;
        const expected = this.registeredArguments.length;
        const s = expected === 1 ? "" : "s";
        const forSubcommand = this.parent ? ` for '${this.name()}'` : "";
        const message = `error: too many arguments${forSubcommand}. Expected ${expected} argument${s} but got ${receivedArgs.length}.`;
        this.error(message, { code: "commander.excessArguments" });
      }
      /**
       * Unknown command.
       *
       * @private
       */
      unknownCommand() {
        const unknownName = this.args[0];
        let suggestion = "";
        if (this._showSuggestionAfterError) {
          const candidateNames = [];
          this.createHelp().visibleCommands(this).forEach((command) => {
            candidateNames.push(command.name());
            if (command.alias()) candidateNames.push(command.alias());
          });
          suggestion = suggestSimilar(unknownName, candidateNames);
        }
        const message = `error: unknown command '${unknownName}'${suggestion}`;
        this.error(message, { code: "commander.unknownCommand" });
      }
      /**
       * Get or set the program version.
       *
       * This method auto-registers the "-V, --version" option which will print the version number.
       *
       * You can optionally supply the flags and description to override the defaults.
       *
       * @param {string} [str]
       * @param {string} [flags]
       * @param {string} [description]
       * @return {(this | string | undefined)} `this` command for chaining, or version string if no arguments
       */
      version(str, flags, description) {
        if (str === void 0) return this._version;
        this._version = str;
        flags = flags || "-V, --version";
        description = description || "output the version number";
        const versionOption = this.createOption(flags, description);
        this._versionOptionName = versionOption.attributeName();
        this._registerOption(versionOption);
        this.on("option:" + versionOption.name(), () => {
          this._outputConfiguration.writeOut(`${str}
`);
          this._exit(0, "commander.version", str);
        });
        return this;
      }
      /**
       * Set the description.
       *
       * @param {string} [str]
       * @param {object} [argsDescription]
       * @return {(string|Command)}
       */
      description(str, argsDescription) {
        if (str === void 0 && argsDescription === void 0)
          return this._description;
        this._description = str;
        if (argsDescription) {
          this._argsDescription = argsDescription;
        }
        return this;
      }
      /**
       * Set the summary. Used when listed as subcommand of parent.
       *
       * @param {string} [str]
       * @return {(string|Command)}
       */
      summary(str) {
        if (str === void 0) return this._summary;
        this._summary = str;
        return this;
      }
      /**
       * Set an alias for the command.
       *
       * You may call more than once to add multiple aliases. Only the first alias is shown in the auto-generated help.
       *
       * @param {string} [alias]
       * @return {(string|Command)}
       */
      alias(alias) {
        if (alias === void 0) return this._aliases[0];
        let command = this;
        if (this.commands.length !== 0 && this.commands[this.commands.length - 1]._executableHandler) {
          command = this.commands[this.commands.length - 1];
        }
        if (alias === command._name)
          throw new Error("Command alias can't be the same as its name");
        const matchingCommand = this.parent?._findCommand(alias);
        if (matchingCommand) {
          const existingCmd = [matchingCommand.name()].concat(matchingCommand.aliases()).join("|");
          throw new Error(
            `cannot add alias '${alias}' to command '${this.name()}' as already have command '${existingCmd}'`
          );
        }
        command._aliases.push(alias);
        return this;
      }
      /**
       * Set aliases for the command.
       *
       * Only the first alias is shown in the auto-generated help.
       *
       * @param {string[]} [aliases]
       * @return {(string[]|Command)}
       */
      aliases(aliases) {
        if (aliases === void 0) return this._aliases;
        aliases.forEach((alias) => this.alias(alias));
        return this;
      }
      /**
       * Set / get the command usage `str`.
       *
       * @param {string} [str]
       * @return {(string|Command)}
       */
      usage(str) {
        if (str === void 0) {
          if (this._usage) return this._usage;
          const args = this.registeredArguments.map((arg) => {
            return humanReadableArgName(arg);
          });
          return [].concat(
            this.options.length || this._helpOption !== null ? "[options]" : [],
            this.commands.length ? "[command]" : [],
            this.registeredArguments.length ? args : []
          ).join(" ");
        }
        this._usage = str;
        return this;
      }
      /**
       * Get or set the name of the command.
       *
       * @param {string} [str]
       * @return {(string|Command)}
       */
      name(str) {
        if (str === void 0) return this._name;
        this._name = str;
        return this;
      }
      /**
       * Set/get the help group heading for this subcommand in parent command's help.
       *
       * @param {string} [heading]
       * @return {Command | string}
       */
      helpGroup(heading) {
        if (heading === void 0) return this._helpGroupHeading ?? "";
        this._helpGroupHeading = heading;
        return this;
      }
      /**
       * Set/get the default help group heading for subcommands added to this command.
       * (This does not override a group set directly on the subcommand using .helpGroup().)
       *
       * @example
       * program.commandsGroup('Development Commands:);
       * program.command('watch')...
       * program.command('lint')...
       * ...
       *
       * @param {string} [heading]
       * @returns {Command | string}
       */
      commandsGroup(heading) {
        if (heading === void 0) return this._defaultCommandGroup ?? "";
        this._defaultCommandGroup = heading;
        return this;
      }
      /**
       * Set/get the default help group heading for options added to this command.
       * (This does not override a group set directly on the option using .helpGroup().)
       *
       * @example
       * program
       *   .optionsGroup('Development Options:')
       *   .option('-d, --debug', 'output extra debugging')
       *   .option('-p, --profile', 'output profiling information')
       *
       * @param {string} [heading]
       * @returns {Command | string}
       */
      optionsGroup(heading) {
        if (heading === void 0) return this._defaultOptionGroup ?? "";
        this._defaultOptionGroup = heading;
        return this;
      }
      /**
       * @param {Option} option
       * @private
       */
      _initOptionGroup(option) {
        if (this._defaultOptionGroup && !option.helpGroupHeading)
          option.helpGroup(this._defaultOptionGroup);
      }
      /**
       * @param {Command} cmd
       * @private
       */
      _initCommandGroup(cmd) {
        if (this._defaultCommandGroup && !cmd.helpGroup())
          cmd.helpGroup(this._defaultCommandGroup);
      }
      /**
       * Set the name of the command from script filename, such as process.argv[1],
       * or require.main.filename, or __filename.
       *
       * (Used internally and public although not documented in README.)
       *
       * @example
       * program.nameFromFilename(require.main.filename);
       *
       * @param {string} filename
       * @return {Command}
       */
      nameFromFilename(filename) {
        this._name = path.basename(filename, path.extname(filename));
        return this;
      }
      /**
       * Get or set the directory for searching for executable subcommands of this command.
       *
       * @example
       * program.executableDir(__dirname);
       * // or
       * program.executableDir('subcommands');
       *
       * @param {string} [path]
       * @return {(string|null|Command)}
       */
      executableDir(path2) {
        if (path2 === void 0) return this._executableDir;
        this._executableDir = path2;
        return this;
      }
      /**
       * Return program help documentation.
       *
       * @param {{ error: boolean }} [contextOptions] - pass {error:true} to wrap for stderr instead of stdout
       * @return {string}
       */
      helpInformation(contextOptions) {
        const helper = this.createHelp();
        const context = this._getOutputContext(contextOptions);
        helper.prepareContext({
          error: context.error,
          helpWidth: context.helpWidth,
          outputHasColors: context.hasColors
        });
        const text = helper.formatHelp(this, helper);
        if (context.hasColors) return text;
        return this._outputConfiguration.stripColor(text);
      }
      /**
       * @typedef HelpContext
       * @type {object}
       * @property {boolean} error
       * @property {number} helpWidth
       * @property {boolean} hasColors
       * @property {function} write - includes stripColor if needed
       *
       * @returns {HelpContext}
       * @private
       */
      _getOutputContext(contextOptions) {
        contextOptions = contextOptions || {};
        const error = !!contextOptions.error;
        let baseWrite;
        let hasColors;
        let helpWidth;
        if (error) {
          baseWrite = (str) => this._outputConfiguration.writeErr(str);
          hasColors = this._outputConfiguration.getErrHasColors();
          helpWidth = this._outputConfiguration.getErrHelpWidth();
        } else {
          baseWrite = (str) => this._outputConfiguration.writeOut(str);
          hasColors = this._outputConfiguration.getOutHasColors();
          helpWidth = this._outputConfiguration.getOutHelpWidth();
        }
        const write = (str) => {
          if (!hasColors) str = this._outputConfiguration.stripColor(str);
          return baseWrite(str);
        };
        return { error, write, hasColors, helpWidth };
      }
      /**
       * Output help information for this command.
       *
       * Outputs built-in help, and custom text added using `.addHelpText()`.
       *
       * @param {{ error: boolean } | Function} [contextOptions] - pass {error:true} to write to stderr instead of stdout
       */
      outputHelp(contextOptions) {
        let deprecatedCallback;
        if (typeof contextOptions === "function") {
          deprecatedCallback = contextOptions;
          contextOptions = void 0;
        }
        const outputContext = this._getOutputContext(contextOptions);
        const eventContext = {
          error: outputContext.error,
          write: outputContext.write,
          command: this
        };
        this._getCommandAndAncestors().reverse().forEach((command) => command.emit("beforeAllHelp", eventContext));
        this.emit("beforeHelp", eventContext);
        let helpInformation = this.helpInformation({ error: outputContext.error });
        if (deprecatedCallback) {
          helpInformation = deprecatedCallback(helpInformation);
          if (typeof helpInformation !== "string" && !Buffer.isBuffer(helpInformation)) {
            throw new Error("outputHelp callback must return a string or a Buffer");
          }
        }
        outputContext.write(helpInformation);
        if (this._getHelpOption()?.long) {
          this.emit(this._getHelpOption().long);
        }
        this.emit("afterHelp", eventContext);
        this._getCommandAndAncestors().forEach(
          (command) => command.emit("afterAllHelp", eventContext)
        );
      }
      /**
       * You can pass in flags and a description to customise the built-in help option.
       * Pass in false to disable the built-in help option.
       *
       * @example
       * program.helpOption('-?, --help' 'show help'); // customise
       * program.helpOption(false); // disable
       *
       * @param {(string | boolean)} flags
       * @param {string} [description]
       * @return {Command} `this` command for chaining
       */
      helpOption(flags, description) {
        if (typeof flags === "boolean") {
          if (flags) {
            if (this._helpOption === null) this._helpOption = void 0;
            if (this._defaultOptionGroup) {
              this._initOptionGroup(this._getHelpOption());
            }
          } else {
            this._helpOption = null;
          }
          return this;
        }
        this._helpOption = this.createOption(
          flags ?? "-h, --help",
          description ?? "display help for command"
        );
        if (flags || description) this._initOptionGroup(this._helpOption);
        return this;
      }
      /**
       * Lazy create help option.
       * Returns null if has been disabled with .helpOption(false).
       *
       * @returns {(Option | null)} the help option
       * @package
       */
      _getHelpOption() {
        if (this._helpOption === void 0) {
          this.helpOption(void 0, void 0);
        }
        return this._helpOption;
      }
      /**
       * Supply your own option to use for the built-in help option.
       * This is an alternative to using helpOption() to customise the flags and description etc.
       *
       * @param {Option} option
       * @return {Command} `this` command for chaining
       */
      addHelpOption(option) {
        this._helpOption = option;
        this._initOptionGroup(option);
        return this;
      }
      /**
       * Output help information and exit.
       *
       * Outputs built-in help, and custom text added using `.addHelpText()`.
       *
       * @param {{ error: boolean }} [contextOptions] - pass {error:true} to write to stderr instead of stdout
       */
      help(contextOptions) {
        this.outputHelp(contextOptions);
        let exitCode = Number(process2.exitCode ?? 0);
        if (exitCode === 0 && contextOptions && typeof contextOptions !== "function" && contextOptions.error) {
          exitCode = 1;
        }
        this._exit(exitCode, "commander.help", "(outputHelp)");
      }
      /**
       * // Do a little typing to coordinate emit and listener for the help text events.
       * @typedef HelpTextEventContext
       * @type {object}
       * @property {boolean} error
       * @property {Command} command
       * @property {function} write
       */
      /**
       * Add additional text to be displayed with the built-in help.
       *
       * Position is 'before' or 'after' to affect just this command,
       * and 'beforeAll' or 'afterAll' to affect this command and all its subcommands.
       *
       * @param {string} position - before or after built-in help
       * @param {(string | Function)} text - string to add, or a function returning a string
       * @return {Command} `this` command for chaining
       */
      addHelpText(position, text) {
        const allowedValues = ["beforeAll", "before", "after", "afterAll"];
        if (!allowedValues.includes(position)) {
          throw new Error(`Unexpected value for position to addHelpText.
Expecting one of '${allowedValues.join("', '")}'`);
        }
        const helpEvent = `${position}Help`;
        this.on(helpEvent, (context) => {
          let helpStr;
          if (typeof text === "function") {
            helpStr = text({ error: context.error, command: context.command });
          } else {
            helpStr = text;
          }
          if (helpStr) {
            context.write(`${helpStr}
`);
          }
        });
        return this;
      }
      /**
       * Output help information if help flags specified
       *
       * @param {Array} args - array of options to search for help flags
       * @private
       */
      _outputHelpIfRequested(args) {
        const helpOption = this._getHelpOption();
        const helpRequested = helpOption && args.find((arg) => helpOption.is(arg));
        if (helpRequested) {
          this.outputHelp();
          this._exit(0, "commander.helpDisplayed", "(outputHelp)");
        }
      }
    };
    function incrementNodeInspectorPort(args) {
      return args.map((arg) => {
        if (!arg.startsWith("--inspect")) {
          return arg;
        }
        let debugOption;
        let debugHost = "127.0.0.1";
        let debugPort = "9229";
        let match;
        if ((match = arg.match(/^(--inspect(-brk)?)$/)) !== null) {
          debugOption = match[1];
        } else if ((match = arg.match(/^(--inspect(-brk|-port)?)=([^:]+)$/)) !== null) {
          debugOption = match[1];
          if (/^\d+$/.test(match[3])) {
            debugPort = match[3];
          } else {
            debugHost = match[3];
          }
        } else if ((match = arg.match(/^(--inspect(-brk|-port)?)=([^:]+):(\d+)$/)) !== null) {
          debugOption = match[1];
          debugHost = match[3];
          debugPort = match[4];
        }
        if (debugOption && debugPort !== "0") {
          return `${debugOption}=${debugHost}:${parseInt(debugPort) + 1}`;
        }
        return arg;
      });
    }
    function useColor() {
      if (process2.env.NO_COLOR || process2.env.FORCE_COLOR === "0" || process2.env.FORCE_COLOR === "false")
        return false;
      if (process2.env.FORCE_COLOR || process2.env.CLICOLOR_FORCE !== void 0)
        return true;
      return void 0;
    }
    exports.Command = Command2;
    exports.useColor = useColor;
  }
});

// ../../node_modules/commander/index.js
var require_commander = __commonJS({
  "../../node_modules/commander/index.js"(exports) {
    var { Argument: Argument2 } = require_argument();
    var { Command: Command2 } = require_command();
    var { CommanderError: CommanderError2, InvalidArgumentError: InvalidArgumentError2 } = require_error();
    var { Help: Help2 } = require_help();
    var { Option: Option2 } = require_option();
    exports.program = new Command2();
    exports.createCommand = (name) => new Command2(name);
    exports.createOption = (flags, description) => new Option2(flags, description);
    exports.createArgument = (name, description) => new Argument2(name, description);
    exports.Command = Command2;
    exports.Option = Option2;
    exports.Argument = Argument2;
    exports.Help = Help2;
    exports.CommanderError = CommanderError2;
    exports.InvalidArgumentError = InvalidArgumentError2;
    exports.InvalidOptionArgumentError = InvalidArgumentError2;
  }
});

// src/errors.ts
var AgentAuthError = class extends Error {
  /** The error code: the server's `error`, or the SDK's own for local errors. */
  code;
  /** HTTP status of the error answer; `undefined` for local errors and error statuses of a request. */
  status;
  /** The server's `error_description`, or the SDK's explanation. */
  description;
  /** Seconds the server asked to wait (`Retry-After`), when it did. */
  retryAfter;
  constructor(code, description, options = {}) {
    super(
      description ? `${code}: ${description}` : code,
      options.cause === void 0 ? void 0 : { cause: options.cause }
    );
    this.code = code;
    this.status = options.status;
    this.description = description;
    this.retryAfter = options.retryAfter;
  }
  get name() {
    return this.constructor.name;
  }
};
var ConfigurationError = class extends AgentAuthError {
  constructor(description) {
    super("configuration_error", description);
  }
};
var InvalidInputError = class extends AgentAuthError {
  constructor(description) {
    super("invalid_input", description);
  }
};
var IssuerMismatchError = class extends AgentAuthError {
  constructor(description) {
    super("issuer_mismatch", description);
  }
};
var NetworkError = class extends AgentAuthError {
  constructor(description, cause) {
    super("network_error", description, { cause });
  }
};
var TimeoutError = class extends AgentAuthError {
  constructor(description) {
    super("timeout", description);
  }
};
var UnexpectedResponseError = class extends AgentAuthError {
  constructor(description, options = {}) {
    super("unexpected_response", description, options);
  }
};
var InvalidRequestError = class extends AgentAuthError {
};
var RequestNotFoundError = class extends AgentAuthError {
};
var InvalidCredentialsError = class extends AgentAuthError {
};
var InvalidClientError = class extends AgentAuthError {
};
var AgentMismatchError = class extends AgentAuthError {
};
var RequestMismatchError = class extends AgentAuthError {
};
var RequestAlreadyUsedError = class extends AgentAuthError {
};
var RequestContestedError = class extends AgentAuthError {
};
var RequestExpiredError = class extends AgentAuthError {
};
var AccessDeniedError = class extends AgentAuthError {
};
var TooManyRequestsError = class extends AgentAuthError {
};
var UnavailableError = class extends AgentAuthError {
};
var ServerError = class extends AgentAuthError {
};
var BY_CODE = {
  invalid_request: InvalidRequestError,
  not_found: RequestNotFoundError,
  invalid_credentials: InvalidCredentialsError,
  invalid_client: InvalidClientError,
  agent_mismatch: AgentMismatchError,
  request_mismatch: RequestMismatchError,
  request_already_used: RequestAlreadyUsedError,
  request_contested: RequestContestedError,
  request_expired: RequestExpiredError,
  access_denied: AccessDeniedError,
  too_many_requests: TooManyRequestsError,
  temporarily_unavailable: UnavailableError,
  server_error: ServerError
};
function errorFromServer(body, options = {}) {
  const code = typeof body.error === "string" && body.error ? body.error : "unexpected_response";
  const description = typeof body.error_description === "string" ? body.error_description : "";
  const Class = options.status === 404 && (code === "invalid_request" || code === "not_found") ? RequestNotFoundError : BY_CODE[code] ?? AgentAuthError;
  return new Class(code, description, options);
}

// src/page.ts
var REQUEST_ID = /^req_[\x21-\x7e]{1,124}$/;
var NAMED_ENTITIES = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", "#39": "'" };
function decodeEntities(text) {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (entity, name) => {
    const lower = name.toLowerCase();
    if (lower.startsWith("#x")) return safeCodePoint(Number.parseInt(lower.slice(2), 16)) ?? entity;
    if (lower.startsWith("#")) return safeCodePoint(Number.parseInt(lower.slice(1), 10)) ?? entity;
    return NAMED_ENTITIES[lower] ?? entity;
  });
}
function safeCodePoint(value) {
  return Number.isInteger(value) && value >= 0 && value <= 1114111 ? String.fromCodePoint(value) : void 0;
}
function attributes(tag) {
  const found = /* @__PURE__ */ new Map();
  for (const match of tag.matchAll(/([^\s"'<>/=]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'<>`=]+))/g)) {
    const name = match[1].toLowerCase();
    if (!found.has(name)) found.set(name, decodeEntities(match[2] ?? match[3] ?? match[4] ?? ""));
  }
  return found;
}
function metaContents(html, name) {
  const values = [];
  for (const tag of html.match(/<meta\b[^>]*>/gi) ?? []) {
    const attrs = attributes(tag);
    if (attrs.get("name")?.toLowerCase() === name && attrs.has("content")) values.push(attrs.get("content").trim());
  }
  return values;
}
function single(values, where) {
  const distinct = [...new Set(values)];
  if (distinct.length > 1)
    throw new InvalidInputError(
      `The page names more than one request id in ${where} (${distinct.join(", ")}); refusing to guess.`
    );
  return distinct[0];
}
function requestIdFromHtml(html) {
  let id = single(metaContents(html, "request-id"), '<meta name="request-id">');
  if (id === void 0) {
    const pattern = /["']?\brequest[_-]id["']?\s*[:=]\s*["'](req_[^\s"'<>&\\]+)["']/gi;
    id = single(
      [...decodeEntities(html).matchAll(pattern)].map((match) => match[1]),
      "its script data"
    );
  }
  if (id === void 0) {
    throw new InvalidInputError(
      'No request id found in the page: it has no <meta name="request-id"> and no request_id in its data. Is it an agentauth authorization page?'
    );
  }
  if (!REQUEST_ID.test(id)) throw new InvalidInputError("The request id in the page is malformed.");
  return id;
}
function requestIdFrom(input) {
  if (typeof input !== "string")
    throw new InvalidInputError("Expected a request id (req_\u2026) or the authorization page's HTML.");
  const text = input.trim();
  if (REQUEST_ID.test(text)) return text;
  if (text.includes("<")) return requestIdFromHtml(text);
  if (/^https?:\/\//i.test(text)) {
    throw new InvalidInputError(
      "A URL does not carry the request id, and fetching /authorize would start a new request: pass the id or the page's HTML."
    );
  }
  throw new InvalidInputError(
    "Not a request id: expected req_ followed by at most 124 visible ASCII characters, or the authorization page's HTML."
  );
}
function issuerFromPageUrl(url) {
  let parsed;
  try {
    parsed = new URL(String(url));
  } catch {
    throw new InvalidInputError("The page URL is not an absolute URL.");
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:")
    throw new InvalidInputError("The page URL must be http or https.");
  const at = parsed.pathname.lastIndexOf("/authorize");
  if (at < 0 || !/^\/authorize(\/continue)?\/?$/.test(parsed.pathname.slice(at))) {
    throw new InvalidInputError("The page URL is not an authorization page (\u2026/authorize).");
  }
  return parsed.origin + parsed.pathname.slice(0, at);
}
function normalizeIssuer(issuer) {
  let parsed;
  try {
    parsed = new URL(issuer);
  } catch {
    return void 0;
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:" || parsed.search || parsed.hash || parsed.username || parsed.password)
    return void 0;
  return parsed.origin + parsed.pathname.replace(/\/+$/, "");
}
var INVISIBLE_OR_BREAKING = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
function quoteUntrusted(text, max = 100) {
  const characters = Array.from(String(text));
  const cut = characters.length > max ? `${characters.slice(0, max).join("")}\u2026` : characters.join("");
  return JSON.stringify(cut).replace(
    INVISIBLE_OR_BREAKING,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`
  );
}
function isLoopbackIssuer(issuer) {
  const host = new URL(issuer).hostname;
  return host === "localhost" || host.endsWith(".localhost") || host === "[::1]" || /^127(\.\d{1,3}){3}$/.test(host);
}

// src/keys.ts
var ASSERTION_LIFETIME = 60;
var subtle = () => {
  const value = globalThis.crypto?.subtle;
  if (!value)
    throw new ConfigurationError("Signing with a key needs WebCrypto (crypto.subtle), which is missing here.");
  return value;
};
function algorithmOf(key) {
  return key.kty === "OKP" ? { jws: "EdDSA", importAs: { name: "Ed25519" }, signAs: { name: "Ed25519" } } : { jws: "ES256", importAs: { name: "ECDSA", namedCurve: "P-256" }, signAs: { name: "ECDSA", hash: "SHA-256" } };
}
function readPrivateKey(raw) {
  let value = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch {
      throw new ConfigurationError(
        "The private key is not JSON: give the private JWK that agentauth-agent keygen wrote."
      );
    }
  }
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw new ConfigurationError("The private key must be a JWK: a JSON object with kty, crv, x and d.");
  const jwk = value;
  const text = (name) => typeof jwk[name] === "string" && jwk[name] !== "" ? jwk[name] : void 0;
  const [x, y, d] = [text("x"), text("y"), text("d")];
  if (d === void 0 || x === void 0)
    throw new ConfigurationError(
      'The key has no private part ("d"): give the agent its private key; its owner registers the public one.'
    );
  if (jwk.kty === "OKP" && jwk.crv === "Ed25519") return { kty: "OKP", crv: "Ed25519", x, d };
  if (jwk.kty === "EC" && jwk.crv === "P-256" && y !== void 0) return { kty: "EC", crv: "P-256", x, y, d };
  throw new ConfigurationError("Only Ed25519 (kty OKP) and P-256 (kty EC) keys can sign in.");
}
function publicKeyOf(key) {
  return key.kty === "EC" ? { kty: key.kty, crv: key.crv, x: key.x, y: key.y } : { kty: key.kty, crv: key.crv, x: key.x };
}
async function keyThumbprint(key) {
  const members = key.kty === "EC" ? `{"crv":"${key.crv}","kty":"${key.kty}","x":"${key.x}","y":"${key.y}"}` : `{"crv":"${key.crv}","kty":"${key.kty}","x":"${key.x}"}`;
  return base64url(new Uint8Array(await subtle().digest("SHA-256", new TextEncoder().encode(members))));
}
async function generateAgentKey(alg = "Ed25519") {
  const params = alg === "Ed25519" ? { name: "Ed25519" } : { name: "ECDSA", namedCurve: "P-256" };
  const pair = await subtle().generateKey(params, true, ["sign", "verify"]);
  const privateKey = readPrivateKey(await subtle().exportKey("jwk", pair.privateKey));
  return { privateKey, publicKey: publicKeyOf(privateKey) };
}
async function signAssertion(key, claims, nowMs = Date.now()) {
  const algorithm2 = algorithmOf(key);
  let signer;
  try {
    signer = await subtle().importKey("jwk", { ...key }, algorithm2.importAs, false, ["sign"]);
  } catch (error) {
    throw new ConfigurationError(
      `The private key cannot be used: ${error instanceof Error ? error.message : String(error)}`
    );
  }
  const iat = Math.floor(nowMs / 1e3);
  const header = { alg: algorithm2.jws, typ: "JWT" };
  const payload = {
    iss: claims.agentId,
    sub: claims.agentId,
    aud: claims.issuer,
    request_id: claims.requestId,
    jti: randomId(),
    iat,
    exp: iat + ASSERTION_LIFETIME
  };
  const input = `${base64url(json(header))}.${base64url(json(payload))}`;
  const signature = await subtle().sign(algorithm2.signAs, signer, new TextEncoder().encode(input));
  return `${input}.${base64url(new Uint8Array(signature))}`;
}
var json = (value) => new TextEncoder().encode(JSON.stringify(value));
function base64url(bytes) {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
function randomId() {
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  return base64url(bytes);
}

// src/sse.ts
var MAX_LINE_LENGTH = 64 * 1024;
var MAX_EVENT_DATA_LENGTH = 64 * 1024;
var LINE_END = /[\r\n]/g;
async function* readEvents(body, onActivity = () => {
}, signal) {
  const reader = body.getReader();
  const onAbort = () => void reader.cancel(signal?.reason).catch(() => {
  });
  signal?.addEventListener("abort", onAbort, { once: true });
  const decoder = new TextDecoder();
  let partial = "";
  let first = true;
  let afterCR = false;
  let event = "";
  let data = [];
  let dataLength = 0;
  try {
    for (; ; ) {
      const { value, done } = await reader.read();
      if (signal?.aborted) throw signal.reason;
      if (done) return;
      onActivity();
      let text = decoder.decode(value, { stream: true });
      if (first && text.length > 0) {
        if (text.charCodeAt(0) === 65279) text = text.slice(1);
        first = false;
      }
      let start = 0;
      if (afterCR && text.length > 0) {
        if (text.charCodeAt(0) === 10) start = 1;
        afterCR = false;
      }
      for (; ; ) {
        LINE_END.lastIndex = start;
        const end = LINE_END.exec(text)?.index ?? -1;
        if (end < 0) {
          if (partial.length + text.length - start > MAX_LINE_LENGTH) throw tooLong("line", MAX_LINE_LENGTH);
          partial += text.slice(start);
          break;
        }
        const line = partial + text.slice(start, end);
        partial = "";
        if (line.length > MAX_LINE_LENGTH) throw tooLong("line", MAX_LINE_LENGTH);
        if (text.charCodeAt(end) === 13) {
          if (end + 1 < text.length) start = text.charCodeAt(end + 1) === 10 ? end + 2 : end + 1;
          else [start, afterCR] = [end + 1, true];
        } else {
          start = end + 1;
        }
        if (line === "") {
          if (data.length > 0) yield { event: event || "message", data: data.join("\n") };
          event = "";
          data = [];
          dataLength = 0;
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let fieldValue = colon < 0 ? "" : line.slice(colon + 1);
        if (fieldValue.startsWith(" ")) fieldValue = fieldValue.slice(1);
        if (field === "event") event = fieldValue;
        else if (field === "data") {
          dataLength += fieldValue.length + 1;
          if (dataLength > MAX_EVENT_DATA_LENGTH) throw tooLong("event", MAX_EVENT_DATA_LENGTH);
          data.push(fieldValue);
        }
      }
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    reader.cancel().catch(() => {
    });
  }
}
function tooLong(what, limit) {
  return new UnexpectedResponseError(
    `The event stream sent ${what === "line" ? "a line" : "an event"} longer than ${limit} characters; it is not an agentauth stream.`
  );
}

// src/client.ts
var VERSION = "0.1.0";
var ACTIONS_PATH = "/api/agent/actions";
var ACTIONS_ASSERTION_REQUEST_ID = "agent-actions";
var ACTION_POLL_SECONDS = 5;
function isAgentAction(value) {
  return isRecord(value) && typeof value.id === "string" && typeof value.client_name === "string" && typeof value.message === "string" && Array.isArray(value.words) && typeof value.status === "string" && typeof value.expires_at === "number";
}
var POLL_INTERVAL_MS = 1e3;
var STEADY_POLLING_MS = 6e4;
var BACKOFF_START_MS = 2e3;
var BACKOFF_CAP_MS = 3e4;
var STREAM_IDLE_MS = 4e4;
function budget(timeoutMs, callerSignal, what) {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new TimeoutError(`${what} did not finish within ${timeoutMs} ms.`)),
    timeoutMs
  );
  const onAbort = () => controller.abort(callerSignal?.reason);
  if (callerSignal?.aborted) controller.abort(callerSignal.reason);
  else callerSignal?.addEventListener("abort", onAbort, { once: true });
  return {
    signal: controller.signal,
    deadline: Date.now() + timeoutMs,
    dispose() {
      clearTimeout(timer);
      callerSignal?.removeEventListener("abort", onAbort);
    }
  };
}
function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
function parseRetryAfter(value) {
  if (value === null) return void 0;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const date = Date.parse(text);
  return Number.isNaN(date) ? void 0 : Math.max(0, Math.ceil((date - Date.now()) / 1e3));
}
var MAX_BODY_BYTES = 64 * 1024;
async function readText(response, signal) {
  const tooLarge = () => new UnexpectedResponseError(
    `The server answered more than ${MAX_BODY_BYTES} bytes; no agentauth answer is that large.`,
    { status: response.status }
  );
  if (Number(response.headers.get("content-length")) > MAX_BODY_BYTES) {
    response.body?.cancel().catch(() => {
    });
    throw tooLarge();
  }
  if (!response.body) return "";
  const reader = response.body.getReader();
  const onAbort = () => void reader.cancel(signal.reason).catch(() => {
  });
  signal.addEventListener("abort", onAbort, { once: true });
  const decoder = new TextDecoder();
  let text = "";
  let size = 0;
  try {
    for (; ; ) {
      const { value, done } = await reader.read();
      if (signal.aborted) throw signal.reason;
      if (done) return text + decoder.decode();
      size += value.byteLength;
      if (size > MAX_BODY_BYTES) throw tooLarge();
      text += decoder.decode(value, { stream: true });
    }
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    if (error instanceof AgentAuthError) throw error;
    throw new NetworkError(
      `Reading the answer failed: ${error instanceof Error ? error.message : String(error)}`,
      error
    );
  } finally {
    signal.removeEventListener("abort", onAbort);
    reader.cancel().catch(() => {
    });
  }
}
async function readJson(response, signal) {
  const text = await readText(response, signal);
  try {
    return JSON.parse(text);
  } catch {
    return void 0;
  }
}
function isRecord(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
var STATUSES = ["pending", "authenticated", "completed", "error"];
function isStatusView(value) {
  return isRecord(value) && typeof value.status === "string" && STATUSES.includes(value.status);
}
function isRequestView(value) {
  const resource = isRecord(value) ? value.resource : void 0;
  return isStatusView(value) && ["request_id", "client_id", "client_name", "redirect_host", "scope"].every(
    (field) => typeof value[field] === "string"
  ) && typeof value.expires_at === "number" && // A server older than resource indicators has no `resource`: it issues no such tokens.
  (resource === void 0 || resource === null || typeof resource === "string");
}
function approvalPendingOf(answer) {
  const { message, approval_id: approvalId, expires_at: expiresAt, expires_in: expiresIn } = answer;
  if (typeof message !== "string" || typeof approvalId !== "string" || typeof expiresAt !== "number" || typeof expiresIn !== "number" || !Number.isFinite(expiresIn) || expiresIn < 0)
    throw unexpected("The approval_pending answer lacks its message, approval_id, expires_at or expires_in.", 202);
  return { message, approvalId, expiresAt, expiresIn };
}
function unexpected(description, status) {
  return new UnexpectedResponseError(description, status === void 0 ? {} : { status });
}
function environment(name) {
  try {
    const value = globalThis.process?.env?.[name];
    return value === "" ? void 0 : value;
  } catch {
    return void 0;
  }
}
function optionalText(value, name) {
  if (value === void 0 || value === null || value === "") return void 0;
  if (typeof value !== "string") throw new ConfigurationError(`${name} must be a string.`);
  return value;
}
function expectedHost(value) {
  if (!value.includes("://")) return value.trim();
  try {
    return new URL(value).host;
  } catch {
    throw new InvalidInputError("expect.host is neither a host nor a URL.");
  }
}
var AgentAuth = class {
  /** The issuer, canonical: no trailing slash. */
  issuer;
  #agentId;
  #agentSecret;
  #privateKey;
  #model;
  #fetch;
  #timeoutMs;
  #maxRetries;
  constructor(options = {}) {
    const issuer = optionalText(options.issuer, "issuer") ?? environment("AGENTAUTH_ISSUER");
    if (issuer === void 0)
      throw new ConfigurationError(
        "The issuer is missing: pass issuer or set AGENTAUTH_ISSUER to the agentauth server's URL."
      );
    const canonical = normalizeIssuer(issuer);
    if (canonical === void 0)
      throw new ConfigurationError(
        "The issuer must be an absolute http(s) URL without query, fragment or credentials."
      );
    if (canonical.startsWith("http:") && options.allowInsecureHttp !== true && !isLoopbackIssuer(canonical)) {
      throw new ConfigurationError(
        "The issuer uses plain http on another host; the agent secret would travel in clear. Use https, or pass allowInsecureHttp: true on a network you trust."
      );
    }
    this.issuer = canonical;
    this.#agentId = optionalText(options.agentId, "agentId") ?? environment("AGENTAUTH_AGENT_ID");
    const secret = optionalText(options.agentSecret, "agentSecret");
    const key = options.privateKey === void 0 || options.privateKey === null ? void 0 : options.privateKey;
    if (secret !== void 0 && key !== void 0)
      throw new ConfigurationError("Pass agentSecret or privateKey, not both.");
    const fromEnvironment = secret === void 0 && key === void 0;
    const secretEnv = fromEnvironment ? environment("AGENTAUTH_AGENT_SECRET") : void 0;
    const keyEnv = fromEnvironment ? environment("AGENTAUTH_AGENT_KEY") : void 0;
    if (secretEnv !== void 0 && keyEnv !== void 0)
      throw new ConfigurationError("Both AGENTAUTH_AGENT_SECRET and AGENTAUTH_AGENT_KEY are set: keep one.");
    this.#agentSecret = secret ?? secretEnv;
    const privateKey = key ?? keyEnv;
    this.#privateKey = privateKey === void 0 ? void 0 : readPrivateKey(privateKey);
    this.#model = optionalText(options.model, "model") ?? environment("AGENTAUTH_MODEL");
    const custom = options.fetch;
    if (custom !== void 0 && typeof custom !== "function") throw new ConfigurationError("fetch must be a function.");
    this.#fetch = custom ?? ((input, init) => globalThis.fetch(input, init));
    this.#timeoutMs = positive(options.timeoutMs, 3e4, "timeoutMs");
    const maxRetries = options.maxRetries ?? 3;
    if (!Number.isInteger(maxRetries) || maxRetries < 0)
      throw new ConfigurationError("maxRetries must be a whole number >= 0.");
    this.#maxRetries = maxRetries;
  }
  /** The agent id in use, if any (it is public: the `sub` of the agent's tokens). */
  get agentId() {
    return this.#agentId;
  }
  /** The model name sent when signing in, if any. */
  get model() {
    return this.#model;
  }
  /**
   * What a request is for, from `GET /api/agent/request` (no credentials sent): the website
   * (`client_id`, `client_name`, `redirect_host`), the scope, the expiry and the status.
   * Accepts the id or the page's HTML. Throws {@link RequestNotFoundError} for an unknown id.
   *
   * @example
   * const view = await agent.inspect('req_…');
   * if (view.redirect_host !== 'notes.acme.example') throw new Error(`Not signing in to ${view.redirect_host}`);
   */
  async inspect(requestIdOrHtml, options = {}) {
    const requestId = requestIdFrom(requestIdOrHtml);
    const call = budget(this.#timeoutMs, options.signal, "inspect");
    try {
      return await this.#inspect(requestId, call);
    } finally {
      call.dispose();
    }
  }
  /**
   * The request's status, from `GET /api/check-status`. `waitForCompletion` is what most agents
   * want; this is one look.
   *
   * @example
   * const { status } = await agent.checkStatus('req_…'); // 'pending' | 'authenticated' | 'completed' | 'error'
   */
  async checkStatus(requestIdOrHtml, options = {}) {
    const requestId = requestIdFrom(requestIdOrHtml);
    const call = budget(this.#timeoutMs, options.signal, "checkStatus");
    try {
      return await this.#status(requestId, call);
    } finally {
      call.dispose();
    }
  }
  /**
   * Signs the agent in to one request, after checking it is for the website expected:
   * 1. reads the id (from `requestId` or `html`); with `pageUrl`, refuses a page that is not
   *    the issuer's ({@link IssuerMismatchError}), and so does HTML whose endpoints name
   *    another server; nothing is sent then;
   * 2. looks the request up ({@link AgentAuth.inspect}) and refuses, without authenticating, a
   *    request for another website, or for tokens for a server (`resource`) other than
   *    `expect.resource` ({@link RequestMismatchError}), or one already in error (the error's
   *    class, such as {@link RequestExpiredError}); with `'any'`, any website and resource;
   * 3. authenticates with `expected_client_id`, `expected_redirect_host` and (when the request
   *    names one) `expected_resource`, so the server refuses too (412) should the request
   *    differ from what was looked up.
   *
   * When the agent's owner has set a policy: a refusal is {@link AccessDeniedError} (403) whose
   * `description` says why in plain words ("Your owner has not allowed Acme Notes
   * (notes.acme.example) for this agent."). When the owner must approve first (202
   * `approval_pending`), `onApprovalPending` is called and the SDK waits for the decision (push,
   * else polling; no credentials sent again): approved, it resolves with `approved_by_owner:
   * true`; denied, {@link AccessDeniedError} ("The agent's owner denied this sign-in."); not
   * decided before the request expires, {@link RequestExpiredError}.
   *
   * Retries after 429 and 503 as the server's `Retry-After` says, within the call's budget.
   *
   * @example
   * const signedIn = await agent.signIn({
   *   requestId: 'req_…',
   *   expect: { host: 'notes.acme.example' },
   *   onApprovalPending: ({ message }) => console.log(message), // "Waiting for Ada to approve …"
   * });
   * console.log(`Signed in to the website that calls itself ${quoteUntrusted(signedIn.client_name)}; the browser continues by itself.`);
   */
  async signIn(options) {
    const expectation = checkedExpectation(options?.expect);
    const expected = {
      clientId: expectation === "any" ? void 0 : expectation.clientId,
      host: expectation === "any" || expectation.host === void 0 ? void 0 : expectedHost(expectation.host),
      resource: expectation === "any" ? void 0 : expectation.resource
    };
    positive(options.approvalTimeoutMs, 1, "approvalTimeoutMs");
    const agentId = this.#agentId;
    const agentSecret = this.#agentSecret;
    const privateKey = this.#privateKey;
    const model = this.#model;
    if (agentId === void 0)
      throw new ConfigurationError("The agent id is missing: pass agentId or set AGENTAUTH_AGENT_ID.");
    if (agentSecret === void 0 && privateKey === void 0)
      throw new ConfigurationError(
        "The agent secret is missing: pass agentSecret or set AGENTAUTH_AGENT_SECRET (or, for a key-bound agent, privateKey or AGENTAUTH_AGENT_KEY)."
      );
    if (model === void 0)
      throw new ConfigurationError(
        "The model is missing: pass model or set AGENTAUTH_MODEL (the AI model the agent runs on)."
      );
    const fromId = options.requestId === void 0 ? void 0 : requestIdFrom(options.requestId);
    const fromHtml = options.html === void 0 ? void 0 : requestIdFrom(options.html);
    const requestId = fromId ?? fromHtml;
    if (requestId === void 0)
      throw new InvalidInputError("Pass the request as requestId (the id or the page's HTML) or html.");
    if (fromId !== void 0 && fromHtml !== void 0 && fromId !== fromHtml)
      throw new InvalidInputError("requestId and html name different requests.");
    if (options.pageUrl !== void 0) {
      const pageIssuer = normalizeIssuer(issuerFromPageUrl(options.pageUrl));
      if (pageIssuer !== this.issuer)
        throw new IssuerMismatchError(
          `The page belongs to ${pageIssuer ?? "another server"}, not to the issuer ${this.issuer}.`
        );
    }
    for (const html of [options.html, options.requestId]) if (html?.includes("<")) this.#checkPageEndpoints(html);
    const call = budget(this.#timeoutMs, options.signal, "signIn");
    try {
      const view = await this.#inspect(requestId, call);
      if (view.status === "error") throw errorFromServer(view);
      const website = `website (name it gives itself, unverified): ${quoteUntrusted(view.client_name)}`;
      if (expected.clientId !== void 0 && expected.clientId !== view.client_id) {
        throw new RequestMismatchError(
          "request_mismatch",
          `This request is for client_id ${quoteUntrusted(view.client_id, 200)}, not ${quoteUntrusted(expected.clientId, 200)}; refused without authenticating. Its ${website}.`
        );
      }
      if (expected.host !== void 0 && expected.host.toLowerCase() !== view.redirect_host.toLowerCase()) {
        throw new RequestMismatchError(
          "request_mismatch",
          `This request sends the browser to ${view.redirect_host}, not to ${expected.host}; refused without authenticating. Its ${website}.`
        );
      }
      if (expectation !== "any") {
        const problem = resourceProblem(view.resource, expected.resource);
        if (problem)
          throw new RequestMismatchError(
            "request_mismatch",
            `${problem}; refused without authenticating. Its ${website}.`
          );
      }
      const credentials = async () => privateKey === void 0 ? { agent_secret: agentSecret } : { agent_assertion: await signAssertion(privateKey, { agentId, issuer: this.issuer, requestId }) };
      const fields = {
        request_id: requestId,
        agent_id: agentId,
        model,
        expected_client_id: expected.clientId ?? view.client_id,
        expected_redirect_host: expected.host ?? view.redirect_host,
        // When the request names one (the field takes a URI, not null): the server checks it again.
        ...view.resource !== null ? { expected_resource: view.resource } : {}
      };
      let unsure = false;
      let answer;
      try {
        const body = async () => ({ ...fields, ...await credentials() });
        answer = await this.#send("POST", "/api/agent/authenticate", requestId, call, body, (status) => {
          unsure ||= status === 503;
        });
      } catch (error) {
        if (!(unsure && error instanceof RequestAlreadyUsedError)) throw error;
        const { status } = await this.#status(requestId, call);
        if (status !== "authenticated") throw error;
        answer = { status: "authenticated", message: "Agent authenticated (confirmed after a retry)." };
      }
      const {
        status: _status,
        error: _error,
        error_description: _description,
        approval_pending: _held,
        ...request
      } = view;
      if (isRecord(answer) && answer.status === "approval_pending") {
        call.dispose();
        const pending = approvalPendingOf(answer);
        options.onApprovalPending?.(pending);
        await this.#awaitApproval(requestId, pending, options);
        return {
          ...request,
          status: "authenticated",
          message: `The agent's owner approved this sign-in; the browser will now continue to ${view.redirect_host}.`,
          approved_by_owner: true
        };
      }
      if (!isRecord(answer) || answer.status !== "authenticated")
        throw unexpected('The authenticate answer is not {"status":"authenticated"}.');
      return {
        ...request,
        status: "authenticated",
        message: typeof answer.message === "string" ? answer.message : ""
      };
    } finally {
      call.dispose();
    }
  }
  /**
   * Waits for the owner's decision on a held request: resolves once it is `authenticated` (or
   * already `completed`), throws the request's error otherwise (a denial is access_denied).
   */
  async #awaitApproval(requestId, pending, options) {
    const timeoutMs = positive(options.approvalTimeoutMs, (pending.expiresIn + 35) * 1e3, "approvalTimeoutMs");
    const call = budget(timeoutMs, options.signal, "signIn");
    try {
      await this.#follow(requestId, call, options.push !== false, (view) => {
        if (view.status === "error") {
          const error = errorFromServer(view);
          if (!(error instanceof RequestExpiredError)) throw error;
          throw new RequestExpiredError(
            error.code,
            "The request expired before the agent's owner decided; start the sign-in again."
          );
        }
        return view.status === "authenticated" || view.status === "completed" ? true : void 0;
      });
    } catch (error) {
      if (call.signal.aborted && call.signal.reason instanceof TimeoutError) {
        throw new TimeoutError(
          `The agent's owner has not decided within ${Math.round(timeoutMs / 1e3)} s; request ${requestId} still waits for their approval (waitForCompletion keeps waiting).`
        );
      }
      throw error;
    } finally {
      call.dispose();
    }
  }
  /**
   * Waits until the browser has continued (`completed`): over the push endpoint
   * (`/api/check-status/events`, server-sent events) when the server has it, else by polling
   * `/api/check-status` every second for the first minute, then backing off (2, 4, 8, 16, 30,
   * 30 … s). Resolves with `{status: 'completed'}`; throws the error's class when the request
   * ends in `error` ({@link RequestExpiredError}, {@link AccessDeniedError},
   * {@link RequestContestedError}), {@link RequestNotFoundError} for an unknown id, and
   * {@link TimeoutError} after `timeoutMs` (default 60 s). An aborted `signal` rejects with its
   * reason.
   *
   * @example
   * await agent.signIn({ requestId, expect: { host: 'notes.acme.example' } });
   * await agent.waitForCompletion(requestId, { onStatus: ({ status }) => console.log(status) });
   */
  async waitForCompletion(requestIdOrHtml, options = {}) {
    const requestId = requestIdFrom(requestIdOrHtml);
    const timeoutMs = positive(options.timeoutMs, 6e4, "timeoutMs");
    const call = budget(timeoutMs, options.signal, "waitForCompletion");
    let last;
    const observe = (view) => {
      if (last?.status !== view.status || last.error !== view.error || last.approval_pending !== view.approval_pending)
        options.onStatus?.(view);
      last = view;
      if (view.status === "error") throw errorFromServer(view);
      return view.status === "completed" ? { status: "completed" } : void 0;
    };
    try {
      return await this.#follow(requestId, call, options.push !== false, observe);
    } catch (error) {
      if (call.signal.aborted && call.signal.reason instanceof TimeoutError) {
        throw new TimeoutError(
          `Request ${requestId} did not complete within ${timeoutMs} ms; its last status was ${last?.status ?? "unknown"}${last?.approval_pending ? " (waiting for the agent's owner to approve)" : ""}.`
        );
      }
      throw error;
    } finally {
      call.dispose();
    }
  }
  /**
   * The actions websites asked the agent's owner about (`GET /api/agent/actions`): those waiting
   * and those decided or expired in the last ten minutes, newest first, each with its words and
   * a sentence for the agent's user. Authenticates with the agent's secret (HTTP Basic) or, for a
   * key-bound agent, a fresh assertion. The server must have ACTION_APPROVALS on (else
   * {@link RequestNotFoundError}: no such endpoint).
   *
   * @example
   * for (const action of await agent.listActions()) console.log(action.message);
   * // Waiting for your owner to approve: Pay 20 EUR to Acme (Acme Notes)
   */
  async listActions(options = {}) {
    const call = budget(this.#timeoutMs, options.signal, "listActions");
    try {
      return (await this.#actions(call)).actions;
    } finally {
      call.dispose();
    }
  }
  /**
   * Waits until the owner (or their policy) decides the action `actionId`, asking again every
   * `interval` seconds as the server says; resolves with it once `approved`, `denied` or
   * `expired` (a decision is not an error: read `status`). Throws {@link InvalidInputError} when
   * no such action is listed, {@link TimeoutError} after `timeoutMs`.
   *
   * @example
   * const decided = await agent.waitForAction('act_…', { onWaiting: (a) => console.log(a.message) });
   * console.log(decided.message); // "Your owner approved: Pay 20 EUR to Acme (Acme Notes)"
   */
  async waitForAction(actionId, options = {}) {
    if (typeof actionId !== "string" || actionId === "") throw new InvalidInputError("Pass the action id (act_\u2026).");
    const first = budget(this.#timeoutMs, options.signal, "waitForAction");
    let listed;
    try {
      listed = await this.#actions(first);
    } finally {
      first.dispose();
    }
    let action = listed.actions.find((each) => each.id === actionId);
    if (!action)
      throw new InvalidInputError(
        `No action ${actionId} waits for this agent's owner or was decided in the last ten minutes.`
      );
    if (action.status !== "pending") return action;
    options.onWaiting?.(action);
    const timeoutMs = positive(options.timeoutMs, (action.expires_in + 35) * 1e3, "timeoutMs");
    const call = budget(timeoutMs, options.signal, "waitForAction");
    try {
      for (; ; ) {
        await sleep(listed.interval * 1e3, call.signal);
        listed = await this.#actions(call);
        action = listed.actions.find((each) => each.id === actionId) ?? { ...action, status: "expired" };
        if (action.status !== "pending") return action;
      }
    } catch (error) {
      if (call.signal.aborted && call.signal.reason instanceof TimeoutError)
        throw new TimeoutError(
          `The agent's owner has not decided within ${Math.round(timeoutMs / 1e3)} s; action ${actionId} still waits.`
        );
      throw error;
    } finally {
      call.dispose();
    }
  }
  /** One listing of the agent's actions, with the interval the server asks a waiting agent to keep. */
  async #actions(call) {
    const agentId = this.#agentId;
    const agentSecret = this.#agentSecret;
    const privateKey = this.#privateKey;
    if (agentId === void 0)
      throw new ConfigurationError("The agent id is missing: pass agentId or set AGENTAUTH_AGENT_ID.");
    if (agentSecret === void 0 && privateKey === void 0)
      throw new ConfigurationError(
        "The agent secret is missing: pass agentSecret or set AGENTAUTH_AGENT_SECRET (or, for a key-bound agent, privateKey or AGENTAUTH_AGENT_KEY)."
      );
    const authorization = async () => privateKey === void 0 ? `Basic ${btoa(`${agentId}:${agentSecret}`)}` : `Bearer ${await signAssertion(privateKey, { agentId, issuer: this.issuer, requestId: ACTIONS_ASSERTION_REQUEST_ID })}`;
    const answer = await this.#send("GET", ACTIONS_PATH, void 0, call, void 0, void 0, authorization);
    if (!isRecord(answer) || !Array.isArray(answer.actions) || !answer.actions.every(isAgentAction))
      throw unexpected(`${ACTIONS_PATH} answered something that is not a list of actions.`);
    const interval = typeof answer.interval === "number" && answer.interval >= 1 ? answer.interval : ACTION_POLL_SECONDS;
    return { actions: answer.actions, interval };
  }
  /**
   * Follows the request's status until `observe` returns a value (or throws): over the push
   * endpoint first when `push`, else (or when the stream fails) by polling every second for the
   * first minute, then backing off.
   */
  async #follow(requestId, call, push, observe) {
    const started = Date.now();
    if (call.signal.aborted) throw call.signal.reason;
    if (push) {
      const done = await this.#waitByPush(requestId, call, observe);
      if (done !== void 0) return done;
    }
    let backoff = BACKOFF_START_MS;
    let failures = 0;
    for (; ; ) {
      let view;
      try {
        view = await this.#status(requestId, call);
        failures = 0;
      } catch (error) {
        if (!(error instanceof NetworkError) || ++failures > this.#maxRetries) throw error;
      }
      const done = view && observe(view);
      if (done !== void 0) return done;
      let wait = POLL_INTERVAL_MS;
      if (Date.now() - started >= STEADY_POLLING_MS) {
        wait = backoff;
        backoff = Math.min(backoff * 2, BACKOFF_CAP_MS);
      }
      await sleep(wait, call.signal);
    }
  }
  /** Refuses HTML whose agent endpoints name another server than the issuer. */
  #checkPageEndpoints(html) {
    const endpoints = [
      ...metaContents(html, "agent-authenticate-endpoint").map((url) => [url, "/api/agent/authenticate"]),
      ...metaContents(html, "agent-status-endpoint").map((url) => [url, "/api/check-status"])
    ];
    for (const [url, path] of endpoints) {
      if (canonicalUrl(url) !== canonicalUrl(this.issuer + path))
        throw new IssuerMismatchError(`The page names ${url} for its agents, which is not the issuer ${this.issuer}.`);
    }
  }
  async #inspect(requestId, call) {
    const view = await this.#send("GET", "/api/agent/request", requestId, call);
    if (!isRequestView(view)) throw unexpected("The request lookup answered something that is not a request.");
    if (view.request_id !== requestId) throw unexpected("The request lookup answered for another request.");
    return { ...view, resource: view.resource ?? null };
  }
  async #status(requestId, call) {
    const view = await this.#send("GET", "/api/check-status", requestId, call);
    if (!isStatusView(view)) throw unexpected("check-status answered something that is not a status.");
    return view;
  }
  /**
   * Follows the push endpoint to a final status. Returns undefined to fall back to polling: the
   * server has no push endpoint, or the stream failed or closed early.
   */
  async #waitByPush(requestId, call, observe) {
    const stream = new AbortController();
    const onAbort = () => stream.abort(call.signal.reason);
    call.signal.addEventListener("abort", onAbort, { once: true });
    let idle;
    const alive = () => {
      clearTimeout(idle);
      idle = setTimeout(() => stream.abort(new Error("The event stream went silent.")), STREAM_IDLE_MS);
    };
    try {
      alive();
      let response;
      try {
        response = await this.#fetch(this.#url("/api/check-status/events", requestId), {
          headers: this.#headers({ accept: "text/event-stream" }),
          signal: stream.signal,
          redirect: "error"
        });
      } catch {
        if (call.signal.aborted) throw call.signal.reason;
        return void 0;
      }
      const type = response.headers.get("content-type") ?? "";
      if (!response.ok || !/^text\/event-stream\b/i.test(type) || !response.body) {
        const body = await readJson(response, stream.signal);
        if (response.status === 404 && isRecord(body) && body.error === "not_found")
          return observe(await this.#status(requestId, call));
        return void 0;
      }
      for await (const event of readEvents(response.body, alive, stream.signal)) {
        if (event.event !== "status" && event.event !== "message") continue;
        let view;
        try {
          view = JSON.parse(event.data);
        } catch {
          continue;
        }
        if (!isStatusView(view)) continue;
        const done = observe(view);
        if (done !== void 0) return done;
      }
      return void 0;
    } catch (error) {
      if (call.signal.aborted) throw call.signal.reason;
      if (error instanceof AgentAuthError && !(error instanceof UnexpectedResponseError)) throw error;
      return void 0;
    } finally {
      clearTimeout(idle);
      call.signal.removeEventListener("abort", onAbort);
      stream.abort(new Error("done"));
    }
  }
  #url(path, requestId) {
    return `${this.issuer}${path}?request_id=${encodeURIComponent(requestId)}`;
  }
  #headers(extra) {
    const headers = { ...extra };
    if (globalThis.document === void 0)
      headers["user-agent"] = `agentauth-agent-js/${VERSION}`;
    return headers;
  }
  /**
   * One call to the server: the JSON body of a 2xx answer, or the typed error of any other.
   * 429 and 503 are retried after `Retry-After` (1 s when absent) up to maxRetries times while
   * the budget lasts. Redirects are refused, so the secret never goes anywhere but the issuer.
   */
  async #send(method, path, requestId, call, bodyOf, onRetry, authorizationOf) {
    const url = method === "GET" && requestId !== void 0 ? this.#url(path, requestId) : this.issuer + path;
    for (let attempt = 0; ; attempt++) {
      const body = typeof bodyOf === "function" ? await bodyOf() : bodyOf;
      const authorization = authorizationOf ? { authorization: await authorizationOf() } : {};
      let response;
      try {
        response = await this.#fetch(url, {
          method,
          headers: this.#headers(
            body ? { accept: "application/json", "content-type": "application/json", ...authorization } : { accept: "application/json", ...authorization }
          ),
          body: body ? JSON.stringify(body) : null,
          signal: call.signal,
          redirect: "error"
        });
      } catch (error2) {
        if (call.signal.aborted) throw call.signal.reason;
        throw new NetworkError(
          `${method} ${this.issuer}${path} failed: ${error2 instanceof Error ? error2.message : String(error2)}`,
          error2
        );
      }
      const json2 = await readJson(response, call.signal);
      if (response.ok) {
        if (json2 === void 0)
          throw unexpected(`${path} answered ${response.status} without a JSON body.`, response.status);
        return json2;
      }
      const retryAfter = parseRetryAfter(response.headers.get("retry-after"));
      const error = isRecord(json2) && typeof json2.error === "string" ? errorFromServer(json2, { status: response.status, retryAfter }) : response.status === 429 || response.status === 503 ? errorFromServer(
        {
          error: response.status === 429 ? "too_many_requests" : "temporarily_unavailable",
          error_description: `${path} answered ${response.status}.`
        },
        { status: response.status, retryAfter }
      ) : unexpected(`${path} answered ${response.status} without a JSON error body.`, response.status);
      if ((response.status === 429 || response.status === 503) && attempt < this.#maxRetries) {
        const waitMs = (retryAfter ?? 1) * 1e3;
        if (Date.now() + waitMs < call.deadline) {
          onRetry?.(response.status);
          await sleep(waitMs, call.signal);
          continue;
        }
      }
      throw error;
    }
  }
};
function canonicalUrl(url) {
  try {
    return new URL(url).href;
  } catch {
    return url;
  }
}
function positive(value, fallback, name) {
  if (value === void 0) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0)
    throw new ConfigurationError(`${name} must be a positive number.`);
  return value;
}
function checkedExpectation(expect) {
  if (expect === "any") return "any";
  const hint = "Pass expect: { host, clientId } (the website you mean to sign in to), or expect: 'any' to accept any website (see RFC 10027: anyone can hand an agent a request id).";
  if (!isRecord(expect)) throw new InvalidInputError(`signIn needs an expectation. ${hint}`);
  const { host, clientId, resource } = expect;
  for (const [name, value] of [
    ["host", host],
    ["clientId", clientId]
  ]) {
    if (value !== void 0 && (typeof value !== "string" || !/^[\x21-\x7e]{1,300}$/.test(value.trim())))
      throw new InvalidInputError(`expect.${name} must be a non-empty string of visible ASCII.`);
  }
  if (resource !== void 0 && (typeof resource !== "string" || !/^[\x21-\x7e]{1,1000}$/.test(resource)))
    throw new InvalidInputError("expect.resource must be the resource URI, visible ASCII without spaces.");
  if (host === void 0 && clientId === void 0)
    throw new InvalidInputError(`signIn needs at least one expectation. ${hint}`);
  return {
    host,
    clientId: clientId?.trim(),
    resource
  };
}
function resourceProblem(requested, expected) {
  if (requested === (expected ?? null)) return void 0;
  if (expected === void 0)
    return `This request asks for tokens for the server ${quoteUntrusted(requested, 200)}, which you did not expect (pass it as the expected resource if you mean it)`;
  if (requested === null)
    return `This request names no server for its tokens, but you expected tokens for ${quoteUntrusted(expected, 200)}`;
  return `This request asks for tokens for the server ${quoteUntrusted(requested, 200)}, not for ${quoteUntrusted(expected, 200)} which you expected`;
}

// src/cli/keys.ts
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

// ../../node_modules/commander/esm.mjs
var import_index = __toESM(require_commander(), 1);
var {
  program,
  createCommand,
  createArgument,
  createOption,
  CommanderError,
  InvalidArgumentError,
  InvalidOptionArgumentError,
  // deprecated old name
  Command,
  Argument,
  Option,
  Help
} = import_index.default;

// src/cli/keys.ts
var DEFAULT_KEY_FILE = "agentauth-agent-key.json";
function keyOptions(keyFile) {
  const path = keyFile ?? (process.env.AGENTAUTH_AGENT_KEY_FILE || void 0);
  if (path === void 0) return {};
  let text;
  try {
    if (process.platform !== "win32" && (statSync(path).mode & 63) !== 0)
      throw new ConfigurationError(
        `The key file ${path} can be read by other users: make it yours alone (chmod 600 ${path}).`
      );
    text = readFileSync(path, "utf8");
  } catch (error) {
    if (error instanceof ConfigurationError) throw error;
    throw new ConfigurationError(
      `The key file ${path} cannot be read: ${error.code ?? String(error)}.`
    );
  }
  if (keyFile === void 0 && process.env.AGENTAUTH_AGENT_SECRET)
    throw new ConfigurationError("Both AGENTAUTH_AGENT_SECRET and AGENTAUTH_AGENT_KEY_FILE are set: keep one.");
  return { privateKey: readPrivateKey(text) };
}
function algorithm(value) {
  if (value !== "Ed25519" && value !== "ES256") throw new InvalidArgumentError("Ed25519 or ES256");
  return value;
}
function keygenCommand(program2, name = "agentauth-agent") {
  program2.command("keygen").description(
    "make a key pair for a key-bound agent: writes the private key (a JWK) to a file only you can read, prints the public key for the agent's owner to register"
  ).option(
    "--out <file>",
    "where to write the private key (refused if it exists; its folder is made, readable only by you)",
    DEFAULT_KEY_FILE
  ).option("--public-out <file>", "also write the public key to this file (refused if it exists)").option("--alg <alg>", "Ed25519 (EdDSA) or ES256 (P-256)", algorithm, "Ed25519").option("--json", 'print {"public_key", "key_thumbprint", "key_file"} as one JSON object').addHelpText(
    "after",
    `
stdout is the public key alone (JSON); --public-out writes it to a file for the owner, only once
the private key is safely written (a shell's "> file" would leave an empty file on a failure):
  ${name} keygen --out ~/.agentauth/agent-key.json --public-out agent-public.jwk
  agentauth agent create --owner-email you@example.com --public-key agent-public.jwk
Then, where the agent runs: AGENTAUTH_AGENT_KEY_FILE=~/.agentauth/agent-key.json (instead of
AGENTAUTH_AGENT_SECRET). The private key never leaves that file: each sign-in sends a signed
assertion, good for one minute, one request and this issuer only.`
  ).action(async (flags) => {
    for (const file of [flags.out, flags.publicOut])
      if (file !== void 0 && existsSync(file))
        throw new Error(`${file} exists; keygen does not overwrite a key (choose another file, or remove it first)`);
    const { privateKey, publicKey } = await generateAgentKey(flags.alg);
    const thumbprint = await keyThumbprint(publicKey);
    const stored = { ...privateKey, alg: flags.alg === "Ed25519" ? "EdDSA" : "ES256", kid: thumbprint };
    try {
      mkdirSync(dirname(flags.out), { recursive: true, mode: 448 });
      writeFileSync(flags.out, `${JSON.stringify(stored, null, 2)}
`, { flag: "wx", mode: 384 });
    } catch (error) {
      const code = error.code;
      throw new Error(
        code === "EEXIST" ? `${flags.out} exists; keygen does not overwrite a key (choose another --out, or remove it first)` : `cannot write ${flags.out}: ${code ?? String(error)}`
      );
    }
    if (flags.publicOut !== void 0) {
      try {
        mkdirSync(dirname(flags.publicOut), { recursive: true });
        writeFileSync(flags.publicOut, `${JSON.stringify(publicKey, null, 2)}
`, { flag: "wx" });
      } catch (error) {
        const code = error.code;
        process.stdout.write(`${JSON.stringify(publicKey, null, 2)}
`);
        throw new Error(
          `private key written to ${flags.out}, but cannot write ${flags.publicOut}: ${code ?? String(error)}; the public key is on stdout`
        );
      }
    }
    if (flags.json) {
      process.stdout.write(
        `${JSON.stringify({ public_key: publicKey, key_thumbprint: thumbprint, key_file: flags.out })}
`
      );
      return;
    }
    process.stdout.write(`${JSON.stringify(publicKey, null, 2)}
`);
    process.stderr.write(
      `private key written to ${flags.out} (readable only by you)
key_thumbprint: ${thumbprint}
register the public key above: agentauth agent create --public-key FILE (or the console)
`
    );
  });
}

// src/cli/sign-in.ts
var EXIT = {
  ok: 0,
  other: 1,
  usage: 2,
  mismatch: 3,
  credentials: 4,
  unusable: 5,
  unavailable: 6,
  timeout: 7,
  notAllowed: 8
};
function exitCodeOf(error, ownerAsked = false) {
  if (error instanceof AccessDeniedError && (error.status === 403 || ownerAsked)) return EXIT.notAllowed;
  if (error instanceof ConfigurationError || error instanceof InvalidInputError || error instanceof UsageError)
    return EXIT.usage;
  if (error instanceof RequestMismatchError || error instanceof IssuerMismatchError) return EXIT.mismatch;
  if (error instanceof InvalidCredentialsError || error instanceof AgentMismatchError) return EXIT.credentials;
  if (error instanceof RequestNotFoundError || error instanceof RequestExpiredError || error instanceof RequestAlreadyUsedError || error instanceof RequestContestedError || error instanceof AccessDeniedError || error instanceof InvalidClientError) {
    return EXIT.unusable;
  }
  if (error instanceof TooManyRequestsError || error instanceof UnavailableError || error instanceof NetworkError)
    return EXIT.unavailable;
  if (error instanceof TimeoutError) return EXIT.timeout;
  return EXIT.other;
}
var UsageError = class extends Error {
  code = "usage_error";
};
function withoutSecret(text, secret = process.env.AGENTAUTH_AGENT_SECRET) {
  return secret && secret.length >= 8 ? text.split(secret).join("[redacted]") : text;
}
function errorBody(error) {
  if (error instanceof AgentAuthError) {
    return {
      error: error.code,
      error_description: error.description,
      ...error.status !== void 0 ? { status: error.status } : {},
      ...error.retryAfter !== void 0 ? { retry_after: error.retryAfter } : {}
    };
  }
  if (error instanceof UsageError) return { error: error.code, error_description: error.message };
  return { error: "error", error_description: error instanceof Error ? error.message : String(error) };
}
function describeRequest(view) {
  const resource = view.resource === null ? "resource: none (tokens for the website itself)" : `resource (server the tokens are for): ${quoteUntrusted(view.resource, 200)}`;
  return `website (name it gives itself, unverified): ${quoteUntrusted(view.client_name)}; browser goes to ${view.redirect_host}; client_id: ${quoteUntrusted(view.client_id, 200)}; scope: "${view.scope}"; ${resource}`;
}
function signInHelp(name) {
  return `
The request:
  REQUEST        a request id (req_\u2026), as the person or the page gave it;
  -              read the authorization page's HTML from stdin and take the id from it
                 (the page's agent endpoints must be the issuer's);
  URL            the authorization page's URL (\u2026/authorize?\u2026), together with
                 --request-id: the URL is only compared with AGENTAUTH_ISSUER (exit 3 when
                 it is another server's) and never fetched, since it does not carry the id and
                 every fetch of it starts a new request.

The website (required, so a request made for another site is refused: consent phishing):
  --expect-host and/or --expect-client; --any only after checking the request some other
  way (${name} sign-in --inspect shows what it is for). A request that asks for tokens for
  another server (an RFC 8707 resource) is refused unless --expect-resource names exactly it.

Plain http is accepted only for this machine (localhost, 127.x.x.x, [::1]); elsewhere the
secret would travel in clear, so it takes --allow-insecure-http.

Environment (never arguments, so the secret stays out of shell history and ps):
  AGENTAUTH_ISSUER        the agentauth server you trust (its BASE_URL)
  AGENTAUTH_AGENT_ID      agt_\u2026
  AGENTAUTH_AGENT_SECRET  aas_\u2026 (sent only to the issuer; never printed)
  AGENTAUTH_AGENT_KEY_FILE  instead of the secret, for a key-bound agent: the private key
                          file ${name} keygen wrote (or --key-file); it never leaves this machine
  AGENTAUTH_MODEL         the AI model the agent runs on (goes into the access token)

Exit codes:
  0  signed in (and, with --wait, the browser continued: completed)
  1  anything else (server error, unexpected answer)
  2  usage or configuration error (missing environment, no expectation, bad argument)
  3  refused: the request is not for the expected website, or the page is not the issuer's
  4  credentials refused (invalid_credentials, agent_mismatch)
  5  request unusable (not found, expired, already used, contested, access denied, client disabled)
  6  rate limited, unavailable, unreachable or not answering in time, after retries
  7  timed out waiting for the browser (--wait; the agent is signed in), or for the
     owner's decision
  8  not allowed by the agent's owner: their policy refuses this sign-in (the
     message says why), or they denied it when asked to approve

When the owner's policy says "ask me" for this website, the command says so on stderr
("Waiting for Ada to approve signing in to \u2026") and waits for their decision, at most
until the request expires (10 minutes after it was made), without sending the secret
again; approved, it goes on as above (with --json, "approved_by_owner": true).

Output: one line on stdout (errors on stderr), or with --json one JSON object on stdout:
  {"status":"authenticated"|"completed","request_id",\u2026} on success,
  {"error","error_description","exit_code","signed_in",\u2026} on failure.`;
}
function wholeSeconds(value) {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError("a whole number of seconds >= 1");
  return Number(value);
}
async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}
async function requestOf(argument, flags) {
  if (/^https?:\/\//i.test(argument)) {
    if (flags.requestId === void 0)
      throw new UsageError(
        "a page URL does not carry the request id: pass it with --request-id req_\u2026 (or pipe the page's HTML with -)"
      );
    return { requestId: flags.requestId, pageUrl: argument };
  }
  if (flags.requestId !== void 0) throw new UsageError("--request-id goes with a page URL only");
  if (argument === "-") return { html: await readStdin() };
  return { requestId: argument };
}
function expectationOf(flags) {
  const named = flags.expectHost !== void 0 || flags.expectClient !== void 0;
  if (flags.any && (named || flags.expectResource !== void 0))
    throw new UsageError("--any cannot be combined with --expect-host, --expect-client or --expect-resource");
  if (flags.any) return "any";
  if (!named)
    throw new UsageError(
      "say which website you mean with --expect-host and/or --expect-client (or --any, after checking the request some other way)"
    );
  return {
    ...flags.expectHost !== void 0 ? { host: flags.expectHost } : {},
    ...flags.expectClient !== void 0 ? { clientId: flags.expectClient } : {},
    ...flags.expectResource !== void 0 ? { resource: flags.expectResource } : {}
  };
}
function capitalized(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
var io = {
  out: (text) => process.stdout.write(withoutSecret(`${text}
`)),
  err: (text) => process.stderr.write(withoutSecret(`${text}
`))
};
async function runSignIn(name, argument, flags) {
  let signedIn = false;
  let ownerAsked = false;
  let requestId;
  try {
    const request = await requestOf(argument, flags);
    const expect = flags.inspect ? "any" : expectationOf(flags);
    const agent = new AgentAuth({
      allowInsecureHttp: flags.allowInsecureHttp === true,
      ...flags.inspect ? {} : keyOptions(flags.keyFile)
    });
    if (flags.inspect) {
      const view = await agent.inspect(request.requestId ?? request.html ?? "");
      io.out(
        flags.json ? JSON.stringify(view) : `${view.request_id}: ${describeRequest(view)}; ${view.status}, ${view.expires_in} s left`
      );
      return EXIT.ok;
    }
    const result = await agent.signIn({
      ...request,
      expect,
      onApprovalPending: ({ message: message2 }) => {
        ownerAsked = true;
        io.err(`${message2} (Ctrl-C stops waiting; the owner can still decide.)`);
      }
    });
    signedIn = true;
    requestId = result.request_id;
    let status = "authenticated";
    if (flags.wait)
      status = (await agent.waitForCompletion(result.request_id, { timeoutMs: flags.timeout * 1e3 })).status;
    const { message: _serverMessage, status: _status, ...rest } = result;
    const approved = result.approved_by_owner ? " with its owner's approval" : "";
    const message = status === "completed" ? `Signed in as ${agent.agentId}${approved}; the browser has continued to ${result.redirect_host} (${result.request_id} completed).` : `Signed in as ${agent.agentId}${approved}; the browser will now continue to ${result.redirect_host} (${result.request_id} authenticated).`;
    io.out(
      flags.json ? JSON.stringify({ status, ...rest, agent_id: agent.agentId, message }) : `${message} ${capitalized(describeRequest(result))}.`
    );
    return EXIT.ok;
  } catch (error) {
    const exitCode = error instanceof TimeoutError && !signedIn && !ownerAsked ? EXIT.unavailable : exitCodeOf(error, ownerAsked);
    const { error: code, error_description: description, retry_after: retryAfter } = errorBody(error);
    if (flags.json) {
      io.out(
        JSON.stringify({
          error: code,
          error_description: description,
          exit_code: exitCode,
          signed_in: signedIn,
          ...requestId ? { request_id: requestId } : {},
          ...retryAfter !== void 0 ? { retry_after: retryAfter } : {}
        })
      );
    } else {
      io.err(
        `${name}: ${code}: ${description}${signedIn ? " (the agent is signed in; the browser has not continued)" : ""}`
      );
    }
    if (exitCode === EXIT.other && !(error instanceof AgentAuthError)) io.err(String(error?.stack ?? ""));
    return exitCode;
  }
}
function signInCommand(program2, options = {}) {
  const name = options.name ?? "agentauth-agent";
  program2.command("sign-in").description("sign this agent in to a sign-in request (credentials from AGENTAUTH_* in the environment)").argument("<request>", "req_\u2026 id, - (the page's HTML on stdin), or the page URL with --request-id").option("--expect-host <host>", "the website the browser must be sent to (host[:port] or a URL)").option("--expect-client <client_id>", "the website's client id").option("--expect-resource <uri>", "the server the tokens are for (RFC 8707 resource), when the request names one").option("--any", "accept whatever website the request is for (only after checking it otherwise)").option("--request-id <id>", "the request id, when the argument is the page URL").option("--inspect", "only show what the request is for (no credentials sent; no expectation needed)").option("--wait", "then wait until the browser has continued (completed)").option("--timeout <seconds>", "how long --wait waits", wholeSeconds, 300).option("--json", "print one JSON object").option(
    "--key-file <file>",
    "a key-bound agent's private key (as keygen wrote it), instead of AGENTAUTH_AGENT_SECRET; or AGENTAUTH_AGENT_KEY_FILE"
  ).option(
    "--allow-insecure-http",
    "accept a plain http AGENTAUTH_ISSUER on another host than this machine (the secret travels in clear)"
  ).addHelpText("after", signInHelp(name)).showHelpAfterError(`(${name} sign-in --help for the forms of the request and the exit codes)`).exitOverride((error) => {
    process.exit(error.exitCode === 0 ? 0 : EXIT.usage);
  }).action(async (argument, flags) => {
    process.exitCode = await runSignIn(name, argument, flags);
  });
}

// src/cli/actions.ts
var LEADS = {
  pending: "Waiting for your owner to approve",
  approved: "Your owner approved",
  denied: "Your owner denied",
  expired: "Expired before your owner decided"
};
function actionSentence(action) {
  const lead = action.answered_by === "policy" && action.status === "approved" ? "Your owner's policy approved" : action.answered_by === "policy" && action.status === "denied" ? "Your owner's policy refused" : LEADS[action.status];
  return `${lead}: ${quoteUntrusted(action.words.join("; "), 300)} (${quoteUntrusted(action.client_name)})`;
}
var io2 = {
  out: (text) => process.stdout.write(withoutSecret(`${text}
`)),
  err: (text) => process.stderr.write(withoutSecret(`${text}
`))
};
function wholeSeconds2(value) {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError("a whole number of seconds >= 1");
  return Number(value);
}
async function runActions(name, flags) {
  try {
    const agent = new AgentAuth({ allowInsecureHttp: flags.allowInsecureHttp === true, ...keyOptions(flags.keyFile) });
    const actions = await agent.listActions();
    if (flags.wait === void 0) {
      io2.out(
        flags.json ? JSON.stringify({ actions }) : actions.map((action) => `${action.id}  ${actionSentence(action)}`).join("\n") || "No action waits for your owner or was decided in the last ten minutes."
      );
      return EXIT.ok;
    }
    const id = flags.wait === true ? actions.find((action) => action.status === "pending")?.id : flags.wait;
    if (id === void 0) throw new UsageError("no action waits for your owner: nothing to wait for");
    const decided = await agent.waitForAction(id, {
      ...flags.timeout === void 0 ? {} : { timeoutMs: flags.timeout * 1e3 },
      onWaiting: (action) => io2.err(`${actionSentence(action)} (Ctrl-C stops waiting; your owner can still decide.)`)
    });
    io2.out(flags.json ? JSON.stringify(decided) : actionSentence(decided));
    return decided.status === "approved" ? EXIT.ok : EXIT.notAllowed;
  } catch (error) {
    const exitCode = exitCodeOf(error);
    const { error: code, error_description: description } = errorBody(error);
    if (flags.json) io2.out(JSON.stringify({ error: code, error_description: description, exit_code: exitCode }));
    else io2.err(`${name}: ${code}: ${description}`);
    if (exitCode === EXIT.other && !(error instanceof AgentAuthError)) io2.err(String(error?.stack ?? ""));
    return exitCode;
  }
}
function actionsCommand(program2, name = "agentauth-agent") {
  program2.command("actions").description(
    "what websites asked this agent's owner to approve (pay, delete, send\u2026), and with --wait the owner's decision"
  ).option("--wait [action_id]", "wait for the decision on this action (act_\u2026), or on the newest one still waiting").option("--timeout <seconds>", "how long --wait waits (default: until the action expires)", wholeSeconds2).option("--json", "print one JSON object").option("--key-file <file>", "a key-bound agent's private key, instead of AGENTAUTH_AGENT_SECRET").option("--allow-insecure-http", "accept a plain http AGENTAUTH_ISSUER on another host than this machine").addHelpText(
    "after",
    `
Lists the actions waiting for the agent's owner and those decided in the last ten minutes, one a
line: the action id and a sentence ("Waiting for your owner to approve: "Pay 20 EUR to Acme"
("Acme Notes")"); quoted words are the website's own. The server must have ACTION_APPROVALS on.

With --wait it says on stderr what it waits for, then prints the outcome: exit 0 approved,
8 denied or expired (the owner's answer), 7 timed out; other codes as for sign-in.
Environment: AGENTAUTH_ISSUER, AGENTAUTH_AGENT_ID, AGENTAUTH_AGENT_SECRET (or
AGENTAUTH_AGENT_KEY_FILE), as for ${name} sign-in.`
  ).exitOverride((error) => {
    process.exit(error.exitCode === 0 ? 0 : EXIT.usage);
  }).action(async (flags) => {
    process.exitCode = await runActions(name, flags);
  });
}

export {
  Command,
  AgentAuthError,
  RequestExpiredError,
  AccessDeniedError,
  quoteUntrusted,
  VERSION,
  AgentAuth,
  keyOptions,
  keygenCommand,
  withoutSecret,
  errorBody,
  describeRequest,
  signInCommand,
  actionSentence,
  actionsCommand
};
