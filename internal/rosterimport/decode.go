package rosterimport

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	xunicode "golang.org/x/text/encoding/unicode"
	"golang.org/x/text/unicode/norm"
)

// The encodings a roster file may come in (File.Encoding).
const (
	EncUTF8      = "UTF-8"
	EncUTF8BOM   = "UTF-8 (BOM)"
	EncUTF16LE   = "UTF-16 LE"
	EncUTF16BE   = "UTF-16 BE"
	EncWin1252   = "Windows-1252"
	EncCP850     = "CP850 (MS-DOS)"
	EncUTF8Mixed = "UTF-8, com linhas em Windows-1252 / with Windows-1252 rows"
)

// decoded is a file's text, in NFC, with what was learnt decoding it.
type decoded struct {
	text     string
	encoding string
	// mixedLines are the physical lines (1-based) of a UTF-8 file that were not UTF-8 and were
	// read as Windows-1252.
	mixedLines []int
}

// decode turns a file's bytes into NFC text. The encoding is chosen per file, and the whole
// file must decode in it:
//
//   - a UTF-8 BOM, or bytes that are valid UTF-8: UTF-8;
//   - a UTF-16 BOM (FF FE or FE FF): UTF-16, which must decode without a broken surrogate;
//   - NUL bytes without a BOM: refused (UTF-16 without a BOM cannot be told apart safely);
//   - bytes that are valid UTF-8 on most lines, with some lines that are not (a row pasted
//     from a Windows-1252 sheet into a UTF-8 one): each line that is not UTF-8 is read as
//     Windows-1252, and the lines are listed in the report for the operator to check;
//   - otherwise a one-byte code page: Windows-1252 (Excel's "CSV") or CP850 (Excel's "CSV
//     (MS-DOS)"), whichever reads the file's non-ASCII bytes as Portuguese letters; a file
//     neither reads plausibly, or both equally, is refused ("save it as CSV UTF-8").
func decode(raw []byte) (decoded, error) {
	var d decoded
	switch {
	case bytes.HasPrefix(raw, []byte("\xef\xbb\xbf")):
		raw = raw[3:]
		if !utf8.Valid(raw) {
			return d, fileError("o arquivo começa como UTF-8 (BOM) mas tem bytes que não são UTF-8; salve-o de novo como CSV UTF-8",
				"the file starts as UTF-8 (BOM) but has bytes that are not UTF-8; save it again as CSV UTF-8")
		}
		d.text, d.encoding = string(raw), EncUTF8BOM
	case bytes.HasPrefix(raw, []byte("\xff\xfe")), bytes.HasPrefix(raw, []byte("\xfe\xff")):
		end, name := xunicode.LittleEndian, EncUTF16LE
		if raw[0] == 0xfe {
			end, name = xunicode.BigEndian, EncUTF16BE
		}
		t, err := decodeStrict(xunicode.UTF16(end, xunicode.ExpectBOM), raw)
		if err != nil || (len(raw)%2 != 0) {
			return d, fileError("o arquivo diz ser UTF-16 mas não decodifica por inteiro; salve-o de novo como CSV UTF-8",
				"the file says it is UTF-16 but does not decode as a whole; save it again as CSV UTF-8")
		}
		d.text, d.encoding = t, name
	case bytes.IndexByte(raw, 0) >= 0:
		return d, fileError("o arquivo tem bytes nulos (UTF-16 sem marca de ordem?); salve-o como CSV UTF-8",
			"the file has NUL bytes (UTF-16 without a byte-order mark?); save it as CSV UTF-8")
	case utf8.Valid(raw):
		d.text, d.encoding = string(raw), EncUTF8
	default:
		var err error
		if d, err = decodeLegacy(raw); err != nil {
			return d, err
		}
	}
	d.text = norm.NFC.String(d.text)
	return d, nil
}

// decodeStrict decodes raw with enc and fails when any byte did not decode (a replacement
// character in the output that the input did not spell as UTF-8).
func decodeStrict(enc encoding.Encoding, raw []byte) (string, error) {
	out, err := enc.NewDecoder().Bytes(raw)
	if err != nil {
		return "", err
	}
	if bytes.ContainsRune(out, utf8.RuneError) {
		return "", fmt.Errorf("undecodable bytes")
	}
	return string(out), nil
}

// decodeLegacy handles bytes that are not valid UTF-8: a UTF-8 file with a few lines in
// Windows-1252, or a whole file in Windows-1252 or CP850.
func decodeLegacy(raw []byte) (decoded, error) {
	var d decoded
	lines := bytes.SplitAfter(raw, []byte("\n"))
	utf8Multibyte, badLines := 0, 0
	for _, l := range lines {
		if utf8.Valid(l) {
			if hasNonASCII(l) {
				utf8Multibyte++
			}
		} else {
			badLines++
		}
	}
	if utf8Multibyte > 0 {
		// A UTF-8 file (its accents spelled as UTF-8 elsewhere) with pasted lines.
		var b strings.Builder
		for i, l := range lines {
			if utf8.Valid(l) {
				b.Write(l)
				continue
			}
			t, err := decodeStrict(charmap.Windows1252, l)
			if err != nil || plausibility(t) <= 0 {
				return d, fileError(fmt.Sprintf("a linha %d do arquivo não está em UTF-8 como o resto, nem em Windows-1252; redigite os acentos dessa linha ou salve o arquivo como CSV UTF-8", i+1),
					fmt.Sprintf("line %d of the file is not UTF-8 like the rest, nor Windows-1252; retype that line's accents or save the file as CSV UTF-8", i+1))
			}
			b.WriteString(t)
			d.mixedLines = append(d.mixedLines, i+1)
		}
		d.text, d.encoding = b.String(), EncUTF8Mixed
		return d, nil
	}
	win, errWin := decodeStrict(charmap.Windows1252, raw)
	dos, errDos := decodeStrict(charmap.CodePage850, raw)
	sWin, sDos := -1<<30, -1<<30
	if errWin == nil {
		sWin = plausibility(win)
	}
	if errDos == nil {
		sDos = plausibility(dos)
	}
	switch {
	case sWin > 0 && sWin > sDos:
		d.text, d.encoding = win, EncWin1252
	case sDos > 0 && sDos > sWin:
		d.text, d.encoding = dos, EncCP850
	default:
		return d, fileError("não foi possível saber a codificação do arquivo (não é UTF-8, e nem Windows-1252 nem CP850 o leem com clareza); salve-o como CSV UTF-8",
			"could not tell the file's encoding (it is not UTF-8, and neither Windows-1252 nor CP850 reads it clearly); save it as CSV UTF-8")
	}
	return d, nil
}

func hasNonASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return true
		}
	}
	return false
}

// ptLetters are the non-ASCII letters of Portuguese (and the Spanish ñ), the ordinal signs.
const ptLetters = "áàâãéêíóôõúüçÁÀÂÃÉÊÍÓÔÕÚÜÇñÑºª"

// plausibility scores decoded text: +1 for each non-ASCII character that is a Portuguese
// letter where it stands (not an upper-case letter right after a lower-case one), -1 for any
// other non-ASCII character or control character.
func plausibility(s string) int {
	score := 0
	var prev rune
	for _, r := range s {
		switch {
		case r == '\t' || r == '\r' || r == '\n':
		case r < 0x20 || (r >= 0x7f && r < 0xa0):
			score--
		case r < 0x80:
		case strings.ContainsRune(ptLetters, r) && !(unicode.IsUpper(r) && unicode.IsLower(prev)):
			score++
		default:
			score--
		}
		prev = r
	}
	return score
}
