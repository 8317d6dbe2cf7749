package seed

// Invented Brazilian-looking names. Any combination is synthetic: the generator never reads
// real people's data, and the phone numbers it makes use area code 00, which does not exist.

var girlNames = []string{
	"Ana", "Beatriz", "Maria Clara", "Larissa", "Júlia", "Helena", "Alice", "Laura", "Manuela",
	"Valentina", "Sophia", "Isabela", "Lívia", "Cecília", "Lorena", "Giovanna", "Mariana",
	"Yasmin", "Rafaela", "Letícia", "Heloísa", "Antonella", "Esther", "Lara", "Clara",
	"Eloá", "Maitê", "Aurora", "Luna", "Melissa",
}

var boyNames = []string{
	"Miguel", "Arthur", "Gael", "Heitor", "Theo", "Davi", "Gabriel", "Bernardo", "Samuel",
	"João Pedro", "Lucas", "Pedro Henrique", "Matheus", "Rafael", "Enzo", "Lorenzo", "Benjamin",
	"Nicolas", "Guilherme", "Isaac", "Joaquim", "Anthony", "Bento", "Murilo", "Vicente",
	"Caleb", "Levi", "Noah", "Otávio", "Felipe",
}

var womanNames = []string{
	"Adriana", "Aline", "Camila", "Cláudia", "Daniela", "Débora", "Eliane", "Fernanda",
	"Gabriela", "Jéssica", "Juliana", "Kátia", "Luciana", "Marcela", "Patrícia", "Priscila",
	"Renata", "Rosângela", "Sabrina", "Simone", "Tatiane", "Vanessa", "Viviane", "Raquel",
}

var manNames = []string{
	"Alexandre", "André", "Bruno", "Carlos", "Daniel", "Diego", "Eduardo", "Fábio", "Felipe",
	"Gustavo", "Leandro", "Marcelo", "Márcio", "Paulo", "Ricardo", "Rodrigo", "Sérgio",
	"Thiago", "Vinícius", "Wagner", "Jonas", "Elias", "Josué", "Renato",
}

var grandmaNames = []string{
	"Aparecida", "Benedita", "Conceição", "Dalva", "Francisca", "Irene", "Lourdes", "Nair",
	"Terezinha", "Zilda",
}

var surnames = []string{
	"Silva", "Santos", "Oliveira", "Souza", "Rodrigues", "Ferreira", "Alves", "Pereira", "Lima",
	"Gomes", "Costa", "Ribeiro", "Martins", "Carvalho", "Almeida", "Lopes", "Soares",
	"Fernandes", "Vieira", "Barbosa", "Rocha", "Dias", "Nascimento", "Andrade", "Moreira",
	"Nunes", "Marques", "Machado", "Mendes", "Freitas", "Cardoso", "Ramos", "Gonçalves",
	"Santana", "Teixeira", "Moura", "Campos", "Batista", "Araújo", "Pinto",
}

var churchDenominations = []string{
	"Batista", "Presbiteriana", "Metodista", "Evangélica", "Congregacional", "Assembleia de Deus",
}

var churchNames = []string{
	"Esperança", "Nova Vida", "Betel", "Monte Sião", "Boas Novas", "Filadélfia", "Getsêmani",
	"Renascer", "Shalom", "Ebenézer", "Maranata", "Peniel",
}

// classSpec is one class of the age ladder every demo church has.
type classSpec struct {
	name           string
	minAge, maxAge int
}

var classLadder = []classSpec{
	{"Berçário", 0, 2},
	{"Maternal", 3, 4},
	{"Jardim", 5, 6},
	{"Primários", 7, 8},
	{"Juniores", 9, 10},
	{"Pré-adolescentes", 11, 12},
}
