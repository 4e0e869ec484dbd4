// Major cities outside the UK by English name; row format and flags as in cities.ts.
export const WORLD_CITY_ROWS = `
New York|New York City;NYC|US|
Los Angeles|LA|US|
Chicago||US|
Houston||US|
Phoenix||US|?
Philadelphia||US|
San Antonio||US|
San Diego||US|
Dallas||US|
San Jose||US|
Austin||US|?
Seattle||US|
San Francisco||US|
Boston||US|
Miami||US|
Atlanta||US|
Denver||US|
Washington|Washington DC;Washington D.C.;Washington, D.C.|US|?
Las Vegas|Vegas|US|
Detroit||US|
Nashville||US|
Portland||US|?
Minneapolis||US|
Orlando||US|
New Orleans||US|
Baltimore||US|
Pittsburgh||US|
Salt Lake City||US|
Honolulu||US|
Indianapolis||US|
Kansas City||US|
St Louis|St. Louis;Saint Louis|US|
Tampa||US|
Sacramento||US|
Cincinnati||US|
Toronto||CA|
Montreal|Montréal|CA|
Vancouver||CA|
Calgary||CA|
Ottawa||CA|
Edmonton||CA|
Quebec City||CA|
Winnipeg||CA|
Halifax||CA|?
Sydney||AU|?
Melbourne||AU|
Brisbane||AU|
Perth||AU|?
Adelaide||AU|?
Canberra||AU|
Gold Coast||AU|
Hobart||AU|
Auckland||NZ|
Wellington||NZ|?
Christchurch||NZ|
Queenstown||NZ|
Dublin||IE|
Cork||IE|
Galway||IE|
Limerick||IE|
Waterford||IE|
Kilkenny||IE|
Paris||FR|
Lyon|Lyons|FR|
Marseille|Marseilles|FR|
Toulouse||FR|
Nice||FR|?
Nantes||FR|
Strasbourg||FR|
Montpellier||FR|
Bordeaux||FR|
Lille||FR|
Cannes||FR|
Berlin||DE|
Hamburg||DE|
Munich|München|DE|
Cologne|Köln|DE|
Frankfurt|Frankfurt am Main|DE|
Stuttgart||DE|
Dusseldorf|Düsseldorf|DE|
Leipzig||DE|
Dortmund||DE|
Bremen||DE|
Dresden||DE|
Hanover|Hannover|DE|
Nuremberg|Nürnberg|DE|
Madrid||ES|
Barcelona||ES|
Valencia||ES|
Seville|Sevilla|ES|
Malaga|Málaga|ES|
Bilbao||ES|
Zaragoza||ES|
Palma|Palma de Mallorca|ES|
Alicante||ES|
Lisbon|Lisboa|PT|
Porto|Oporto|PT|
Faro||PT|
Rome|Roma|IT|
Milan|Milano|IT|
Naples|Napoli|IT|
Turin|Torino|IT|
Florence|Firenze|IT|?
Venice|Venezia|IT|
Bologna||IT|
Genoa|Genova|IT|
Verona||IT|
Palermo||IT|
Amsterdam||NL|
Rotterdam||NL|
The Hague|Den Haag|NL|
Utrecht||NL|
Eindhoven||NL|
Brussels|Bruxelles|BE|
Antwerp|Antwerpen|BE|
Ghent|Gent|BE|
Bruges|Brugge|BE|
Zurich|Zürich|CH|
Geneva|Genève|CH|
Basel||CH|
Bern|Berne|CH|
Lausanne||CH|
Vienna|Wien|AT|
Salzburg||AT|
Innsbruck||AT|
Copenhagen|København|DK|
Aarhus||DK|
Stockholm||SE|
Gothenburg|Göteborg|SE|
Malmo|Malmö|SE|
Oslo||NO|
Bergen||NO|
Helsinki||FI|
Reykjavik|Reykjavík|IS|
Warsaw|Warszawa|PL|
Krakow|Kraków;Cracow|PL|
Wroclaw|Wrocław|PL|
Gdansk|Gdańsk|PL|
Poznan|Poznań|PL|
Prague|Praha|CZ|
Brno||CZ|
Budapest||HU|
Bucharest||RO|
Sofia||BG|?
Athens||GR|
Thessaloniki||GR|
Zagreb||HR|
Split||HR|?
Dubrovnik||HR|
Belgrade||RS|
Ljubljana||SI|
Bratislava||SK|
Tallinn||EE|
Riga||LV|
Vilnius||LT|
Kyiv|Kiev|UA|
Lviv||UA|
Moscow||RU|
St Petersburg|Saint Petersburg;St. Petersburg|RU|
Istanbul||TR|
Ankara||TR|
Antalya||TR|
Nicosia||CY|
Limassol||CY|
Valletta||MT|
Dubai||AE|
Abu Dhabi||AE|
Doha||QA|
Riyadh||SA|
Jeddah||SA|
Tel Aviv||IL|
Kuwait City||KW|
Muscat||OM|
Manama||BH|
Amman||JO|
Beirut||LB|
Cairo||EG|
Lagos||NG|
Abuja||NG|
Accra||GH|
Nairobi||KE|
Johannesburg|Joburg|ZA|
Cape Town||ZA|
Durban||ZA|
Pretoria||ZA|
Casablanca||MA|
Marrakech|Marrakesh|MA|
Tunis||TN|
Addis Ababa||ET|
Kampala||UG|
Kigali||RW|
Dar es Salaam||TZ|
Tokyo||JP|
Osaka||JP|
Kyoto||JP|
Seoul||KR|
Busan||KR|
Beijing||CN|
Shanghai||CN|
Shenzhen||CN|
Guangzhou||CN|
Hong Kong||HK|
Taipei||TW|
Singapore||SG|
Kuala Lumpur||MY|
Bangkok||TH|
Jakarta||ID|
Manila||PH|
Ho Chi Minh City|Saigon|VN|
Hanoi||VN|
Mumbai|Bombay|IN|
Delhi|New Delhi|IN|
Bengaluru|Bangalore|IN|
Chennai||IN|
Hyderabad||IN|
Kolkata|Calcutta|IN|
Pune||IN|
Karachi||PK|
Lahore||PK|
Islamabad||PK|
Dhaka||BD|
Colombo||LK|
Mexico City||MX|
Guadalajara||MX|
Monterrey||MX|
Cancun|Cancún|MX|
Sao Paulo|São Paulo|BR|
Rio de Janeiro|Rio|BR|
Buenos Aires||AR|
Santiago||CL|
Bogota|Bogotá|CO|
Medellin|Medellín|CO|
Lima||PE|
Kingston||JM|?
`;
