/* Text from outside (a database, a trace file, sysfs, the kernel) on its way to where it could act:
 * a terminal (escape sequences) or a gnuplot script (backquotes, quotes, macros). Each function
 * keeps what is inert there and writes '?' for the rest. */
#ifndef IOMMUTRACE_UNTRUSTED_TEXT_H
#define IOMMUTRACE_UNTRUSTED_TEXT_H

#include <stddef.h>
#include <stdio.h>

/**
 * utf8_sequence() - Length of the well-formed UTF-8 sequence starting at @s (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF). Never reads past a NUL.
 *
 * Return: the length, or 0 (also for ASCII).
 */
size_t utf8_sequence(const unsigned char *s);
/**
 * text_for_terminal() - Make @s safe for a terminal, in place.
 *
 * C0 controls (line breaks included), DEL, C1 controls (U+0080 to U+009F) and bytes that are not
 * valid UTF-8 become '?', one per byte.
 *
 * Return: @s.
 */
char *text_for_terminal(char *s);
/**
 * text_columns() - The columns a text made safe by text_for_terminal() takes: one per character
 * (a wide one, such as CJK, is counted as one).
 */
size_t text_columns(const char *s);
/**
 * gnuplot_string() - Write @s as a gnuplot single-quoted string, inside which gnuplot substitutes
 * nothing: letters, digits, space and " ,.:;_+-/()=#%[]<>|~*" are kept, every other byte is '?'.
 */
void gnuplot_string(FILE *f, const char *s);

/**
 * shell_word() - @path as one word to paste into a shell, for the commands a message suggests.
 *
 * As it is when it holds only letters, digits and "_./-+:@%,=", else in single quotes ('\'' for a
 * quote). Truncated to @len (always terminated).
 *
 * Return: @out.
 */
char *shell_word(char *out, size_t len, const char *path);

#endif
